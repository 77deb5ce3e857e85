"""The inspect_ai scorer and metrics of ctxprobe's tasks: ctxprobe's strict family scorer.

Each sample's score is what ``ctxprobe run`` would store for the same reply: the family's
strict score and the outcome label (``Score.metadata["outcome"]``). A harness failure (no
answer, a prompt the server cut short, an answer cut off while thinking) has no score in
ctxprobe; here it gets value 0 with ``metadata["counted"] = False`` and is left out of
every metric below, as ctxprobe leaves it out of accuracy.
"""

from __future__ import annotations

import json
from typing import Any

from ctxprobe.inspect_tasks import require_inspect

require_inspect()

from inspect_ai.scorer import (  # noqa: E402
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    grouped,
    metric,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver  # noqa: E402

from ctxprobe.harnesses.cases import HarnessCases  # noqa: E402
from ctxprobe.harnesses.inspect_log import reply_of  # noqa: E402
from ctxprobe.spec import make_spec  # noqa: E402

#: Built cases per (spec, tokenizer): the task builds them, its scorer reads them.
_BUILT: dict[tuple[str, str], HarnessCases] = {}


def harness_cases(spec_json: str, tokenizer: str) -> HarnessCases:
    key = (spec_json, tokenizer)
    if key not in _BUILT:
        _BUILT[key] = HarnessCases(make_spec(json.loads(spec_json)), tokenizer)
    return _BUILT[key]


def _counted(scores: list[SampleScore]) -> list[float]:
    return [s.score.as_float() for s in scores if (s.score.metadata or {}).get("counted", True)]


@metric
def strict_accuracy() -> Metric:
    """Mean strict score over the scored samples (harness failures left out)."""

    def compute(scores: list[SampleScore]) -> float:
        values = _counted(scores)
        return sum(values) / len(values) if values else float("nan")

    return compute


@metric
def harness_failures() -> Metric:
    """Samples left out of accuracy: no answer, input or output truncated."""

    def compute(scores: list[SampleScore]) -> float:
        return float(len(scores) - len(_counted(scores)))

    return compute


@scorer(metrics=[strict_accuracy(), harness_failures(),
                 grouped(strict_accuracy(), "length", all=False, name_template="length {group_name}"),
                 grouped(strict_accuracy(), "depth", all=False, name_template="depth {group_name}")])
def ctxprobe_scorer(spec_json: str, tokenizer: str) -> Scorer:
    """ctxprobe's strict scorer for the cases of ``spec_json`` built with ``tokenizer``."""

    async def score(state: TaskState, target: Target) -> Score:
        cases = harness_cases(spec_json, tokenizer)
        reply = reply_of(str(state.sample_id), state.output, None)
        value, label = cases.score(reply)
        meta: dict[str, Any] = {"outcome": str(label.outcome), "counted": value is not None,
                                "detail": label.detail}
        return Score(value=0.0 if value is None else value, answer=reply.output, explanation=str(label.outcome),
                     metadata=meta)

    return score


@solver
def ctxprobe_generate() -> Solver:
    """``generate()`` with the case's own output limit (``ctxprobe run``'s per case)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, max_tokens=int(state.metadata["max_tokens"]))

    return solve
