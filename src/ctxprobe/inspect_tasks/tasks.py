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


@task
def niah(**params: Any) -> Task:
    """A fact hidden in filler at each depth (``-T distractors=N`` same-form decoys)."""
    return ctxprobe_task("niah", **params)


@task
def multihop(**params: Any) -> Task:
    """Two facts to combine, spread through the filler."""
    return ctxprobe_task("multihop", **params)


@task
def vartrack(**params: Any) -> Task:
    """Variable assignment chains to follow."""
    return ctxprobe_task("vartrack", **params)


@task
def aggregation(**params: Any) -> Task:
    """The most frequent words of a long list."""
    return ctxprobe_task("aggregation", **params)


@task
def documents(**params: Any) -> Task:
    """Question answering over your documents (``-T docs=PATH``)."""
    return ctxprobe_task("documents", **params)


@task
def phonebook(**params: Any) -> Task:
    """The phone book: N names looked up in a book of the length (no depth: ``depths`` is 0)."""
    params.setdefault("depths", "0")
    return ctxprobe_task("phonebook", **params)


@task
def ruler(**params: Any) -> Task:
    """One of RULER's 13 tasks as RULER renders them (``-T task=niah_single_1``)."""
    return ctxprobe_task("ruler", **params)


@task
def mrcr(**params: Any) -> Task:
    """Multi-round coreference: the n-th of several look-alike requests in a conversation."""
    return ctxprobe_task("mrcr", **params)


@task
def graphwalks(**params: Any) -> Task:
    """Breadth-first search and parents in a graph given as edges."""
    return ctxprobe_task("graphwalks", **params)
