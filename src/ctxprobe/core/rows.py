"""The plain row analysis works on: one scored case, as the store hands it over (beside the
shared Case type, below both the store and analysis)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResultRow:
    family: str
    length: int
    depth: float
    rep: int
    outcome: str  # one of ctxprobe.core.outcome.OUTCOMES
    score: float | None  # None when the outcome is a harness failure (not the model's)
    token_count: int = 0
    #: The case's reasoning budget (None: the run has no budget axis).
    reasoning_budget: int | None = None
    #: Reasoning tokens the response was billed for, when the provider reports them.
    reasoning_tokens: int | None = None
    #: Which of the case's k samples (a decoding variant's ``samples=k``); None: sent once.
    sample: int | None = None
