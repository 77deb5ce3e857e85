"""A stored run's cases as an lm-evaluation-harness task folder (``ctxprobe export --lm-eval DIR``).

``lm_eval --include_path DIR --tasks ctxprobe_RUN`` then sends every case exactly as it
was built and stored: the folder holds the cases themselves (one JSONL per task, loaded by
the task's ``custom_dataset`` hook from beside the YAML: nothing regenerated, no search,
no truncation), a YAML per (family, output limit) with the run's decoding as
``generation_kwargs``, and ``utils.py`` whose ``process_results`` scores each answer with
ctxprobe's strict family scorer. A case is sent as its user message, with its system
message (if any) as the task ``description``, which lm-eval sends as the system message
under ``--apply_chat_template``; a case of any other shape (a multi-turn conversation)
cannot be sent by lm-eval unchanged and is refused.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.errors import CtxprobeError
from ctxprobe.harnesses.stored import StoredCases

#: The task YAML; ``!function`` is lm-eval's own tag for a Python hook in the folder.
_YAML = """\
# ctxprobe run {run_id}: {family} cases{limit_note}, exactly as built and stored.
# lm_eval --include_path {dir} --tasks {task} --apply_chat_template ...
task: {task}
tag: {group}
custom_dataset: !function utils.load_cases
dataset_kwargs:
  cases: {cases_file}
test_split: test
output_type: generate_until
doc_to_text: prompt
doc_to_target: target
description: "{{{{system}}}}"
target_delimiter: ""
fewshot_delimiter: ""
num_fewshot: 0
generation_kwargs: {generation}
process_results: !function utils.process_results
metric_list:
  - metric: strict_accuracy
    aggregation: !function utils.scored_mean
    higher_is_better: true
  - metric: harness_failures
    aggregation: !function utils.total
    higher_is_better: false
metadata:
  version: 1
  ctxprobe_run: "{run_id}"
"""

_UTILS = '''\
"""lm-evaluation-harness hooks of an exported ctxprobe run (``ctxprobe export --lm-eval``)."""

from ctxprobe.harnesses.lm_eval_hooks import load_cases as _load, process_results, scored_mean, total  # noqa: F401


def load_cases(**kwargs):
    """The task's cases, from the JSONL beside this file."""
    return _load(__file__, **kwargs)
'''


#: The record's fields the scorer reads back (``CaseRecord.from_json`` with the doc's case id and prompt hash).
_CASE_JSON = ("family", "length", "depth", "rep", "seed", "messages", "expected", "distractors", "meta", "token_count",
              "needle_token_pos", "realised_depth")


def _doc(rec: CaseRecord, run_id: str, family_params: Mapping[str, Any], max_tokens: int) -> dict[str, Any]:
    messages = rec.messages
    roles = [m["role"] for m in messages]
    if roles not in (["user"], ["system", "user"]):
        raise CtxprobeError(f"case {rec.case_id} is a {len(messages)}-message conversation ({', '.join(roles)}): "
                            "lm-eval sends one user message (and a system message), so it cannot send this case "
                            "unchanged; run it with `ctxprobe run` or inspect (ctxprobe.inspect_tasks)")
    return {"case_id": rec.case_id, "run_id": run_id, "family": rec.family, "length": rec.length,
            "depth": rec.depth, "rep": rec.rep, "seed": rec.seed, "token_count": rec.token_count,
            "prompt_hash": rec.prompt_hash, "max_tokens": max_tokens,
            "system": messages[0]["content"] if roles[0] == "system" else "",
            "prompt": messages[-1]["content"], "target": ", ".join(rec.expected),
            # everything the scorer reads, as JSON text (one column type for every family)
            "case_json": json.dumps({k: getattr(rec, k) for k in _CASE_JSON}, ensure_ascii=False),
            "family_params_json": json.dumps(family_params, ensure_ascii=False)}


def _name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")


def write_lm_eval_folder(run_id: str, store_path: str | Path, out_dir: str | Path) -> tuple[str, int, list[str]]:
    """Write the folder; return (the group name to pass to ``--tasks``, cases, task names)."""
    stored = StoredCases(run_id, store_path)
    spec = stored.spec
    if spec.reasoning_budgets is not None:
        raise CtxprobeError(f"run {stored.run_id} has reasoning budgets, which lm-eval has no setting for; "
                            "export a run without --reasoning-budgets")
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for rec in stored.records:
        case = stored.cases[rec.case_id]
        limit = stored.max_tokens(case)
        groups[(rec.family, limit)].append(_doc(rec, stored.run_id, spec.families.get(rec.family, {}), limit))
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CtxprobeError(f"cannot write {out}: {err.strerror or err}") from None
    group = f"ctxprobe_{stored.run_id}"
    limits = defaultdict(set)
    for family, limit in groups:
        limits[family].add(limit)
    tasks = []
    decoding = spec.decoding
    for (family, limit), docs in sorted(groups.items()):
        task = f"{group}_{_name(family)}" + (f"_{limit}" if len(limits[family]) > 1 else "")
        cases_file = f"{task}.jsonl"
        gen: dict[str, Any] = {"until": [], "max_gen_toks": limit, "temperature": decoding.temperature,
                               "do_sample": decoding.temperature > 0}
        if decoding.top_p is not None:
            gen["top_p"] = decoding.top_p
        with open(out / cases_file, "w", encoding="utf-8") as fh:
            for doc in docs:
                fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
        (out / f"{task}.yaml").write_text(_YAML.format(
            run_id=stored.run_id, family=family, limit_note=f" (output limit {limit})", dir=out, task=task,
            group=group, cases_file=cases_file, generation=json.dumps(gen)), encoding="utf-8")
        tasks.append(task)
    (out / "utils.py").write_text(_UTILS, encoding="utf-8")
    return group, sum(len(d) for d in groups.values()), tasks
