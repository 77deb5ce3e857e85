"""inspect_ai tasks for every ctxprobe family: ``inspect eval ctxprobe/niah -T lengths=4k,8k``.

A task takes ctxprobe's parameters as ``-T`` arguments (``lengths``, ``depths``, ``reps``,
``seed``, ``max_tokens``, ``temperature``, ``top_p``, ``tokenizer``; anything else is a
family parameter, ``-T distractors=3``) and builds the same cases ``ctxprobe run`` builds
for that spec: to exact token budgets of the tokenizer inferred for the model being
evaluated as ctxprobe infers it (``openai-api/SERVICE/NAME`` counts with the server's own
``/tokenize`` at ``SERVICE_BASE_URL``), or the one named with ``-T tokenizer=``. Every
sample carries its case id (the sample id), length, depth, repetition, token count and
prompt hash in its metadata, and its answer key and scorer settings (so a log's cases read
back from it when its tokenizer cannot be reached); ``ctxprobe import-inspect LOG`` stores a log as a run.
"""

from __future__ import annotations

from typing import Any

from ctxprobe.inspect_tasks import require_inspect

require_inspect()

from inspect_ai import Task, task  # noqa: E402
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)

from ctxprobe.core.case import Message  # noqa: E402
from ctxprobe.core.family_lookup import family_declaration, family_names  # noqa: E402
from ctxprobe.harnesses.cases import harness_spec  # noqa: E402
from ctxprobe.harnesses.models import inspect_model, spec_model, tokenizer_for  # noqa: E402
from ctxprobe.harnesses.inspect_log import MODEL_KEY, SPEC_KEY, TEMPLATE_KEY, TOKENIZER_KEY, TRAINED_KEY  # noqa: E402
from ctxprobe.harnesses.logged import CASE_KEY, case_content  # noqa: E402
from ctxprobe.inspect_tasks.scoring import ctxprobe_generate, ctxprobe_scorer, harness_cases  # noqa: E402


def _message(m: Message) -> ChatMessage:
    role, content = m["role"], m["content"]
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "assistant":
        return ChatMessageAssistant(content=content)
    return ChatMessageUser(content=content)


def ctxprobe_task(family: str, lengths: Any = None, depths: Any = None, reps: Any = None, seed: Any = None,
                  tokenizer: str | None = None, max_tokens: Any = None, temperature: Any = None,
                  top_p: Any = None, **params: Any) -> Task:
    """A task of ``family``'s cases for the model being evaluated (see the module docstring)."""
    params.pop("model", None)  # inspect hands every task the model; the cases need only its tokenizer
    model = get_model()
    harness = inspect_model(str(model), model.api.base_url)
    tok = tokenizer_for(harness, tokenizer)
    spec = harness_spec(family, model=spec_model(harness), tokenizer=tok, lengths=lengths, depths=depths,
                        reps=reps, seed=seed, max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                        params=params)
    spec_json = spec.model_dump_json()
    cases = harness_cases(spec_json, tok)
    samples = [Sample(input=[_message(m) for m in case.messages], target=list(case.expected), id=case.case_id,
                      metadata={**cases.sample_metadata(case), CASE_KEY: case_content(case)})
               for case in cases.cases.values()]
    decoding = spec.decoding
    config = GenerateConfig(temperature=decoding.temperature, top_p=decoding.top_p, seed=decoding.seed)
    return Task(dataset=MemoryDataset(samples, name=f"ctxprobe-{family}"), solver=[ctxprobe_generate()],
                scorer=ctxprobe_scorer(spec_json, tok), config=config,
                metadata={SPEC_KEY: spec.model_dump(mode="json"), TOKENIZER_KEY: tok, MODEL_KEY: harness.name,
                          TEMPLATE_KEY: cases.chat_template_hash, TRAINED_KEY: cases.trained_context})


def _family_task(family: str) -> Any:
    """The inspect_ai task of one registered family, named after it (``ctxprobe/<family>``):
    its declaration's ``task_defaults`` as default ``-T`` arguments, its ``summary`` (else
    its ``ability``) as the task's description."""
    declared = family_declaration(family)
    defaults = dict(declared.task_defaults)

    def family_task(**params: Any) -> Task:
        for key, value in defaults.items():
            params.setdefault(key, value)
        return ctxprobe_task(family, **params)

    family_task.__name__ = family_task.__qualname__ = family
    family_task.__doc__ = declared.summary or declared.ability or f"ctxprobe's {family} family"
    return task(name=family)(family_task)


#: One task per registered family, ctxprobe's and every installed plugin's: ``inspect eval
#: ctxprobe/<family>`` (generated from the registry: a new family has its task with no line here).
TASKS: dict[str, Any] = {name: _family_task(name) for name in family_names()}
globals().update(TASKS)
