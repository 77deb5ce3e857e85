"""ctxprobe's cases in other evaluation harnesses, and their results back into a store.

``cases``: a harness run's spec and its exact cases (built by ctxprobe's own builder);
``models``: a harness's model names mapped to the tokenizer ctxprobe would infer;
``importing``: replies gathered by a harness, scored and stored as a ctxprobe run;
``inspect_log`` / ``lm_eval_samples``: the readers of each harness's output;
``lm_eval_export``: a run's cases as an lm-evaluation-harness task folder.

This ``__init__`` imports nothing: each module is imported where it is used.
"""
