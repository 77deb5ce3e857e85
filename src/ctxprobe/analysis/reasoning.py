"""A run's reasoning-budget axis: per family and budget, what the budget bought.

A sweep with reasoning budgets sends every case once per budget. Each budget is its own
curve, so rows are split by budget into labels ``FAMILY@thinkB`` (``niah@think1k``) that
go through the ordinary grid statistics: accuracy over length × depth, the effective
length and its interval, per budget. :func:`budget_stats` adds, per (family, budget):

- accuracy over every length and depth (harness failures and cut-offs left out);
- the effective length of that budget's curve;
- the share of answers **cut off while thinking** (the output cap reached before any
  answer: ``output_truncated`` with no score). They are never scored as wrong: the budget
  ran out, the model did not answer wrong, so they are left out of accuracy and shown;
- the reasoning tokens billed, as the provider reported them (None when none did).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ctxprobe.analysis.grid import DEFAULT_THRESHOLD, Profile, is_harness_failure
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.outcome import Outcome
from ctxprobe.core.rows import ResultRow

SEPARATOR = "@think"


def budget_label(budget: int) -> str:
    """``0`` → "0", 1024 → "1k", 1536 → "1536" (exact multiples of 1,024 as k)."""
    return f"{budget // 1024}k" if budget and budget % 1024 == 0 else str(budget)


def budget_family(family: str, budget: int) -> str:
    """The label one budget's curve is reported under: ``niah@think1k``."""
    return f"{family}{SEPARATOR}{budget_label(budget)}"


def base_family(label: str) -> str:
    """``niah@think1k`` → ``niah``; a label without a budget is returned as it is."""
    return label.split(SEPARATOR, 1)[0]


def has_budgets(rows: Iterable[ResultRow]) -> bool:
    return any(r.reasoning_budget is not None for r in rows)


def split_by_budget(rows: Iterable[ResultRow]) -> list[ResultRow]:
    """Rows relabelled ``FAMILY@thinkB`` by their budget (rows without one unchanged)."""
    return [r if r.reasoning_budget is None else dataclasses.replace(r, family=budget_family(r.family, r.reasoning_budget))
            for r in rows]


def cut_while_thinking(row: ResultRow) -> bool:
    """The reply hit its output cap while still thinking: no answer, so no score."""
    return row.outcome == Outcome.OUTPUT_TRUNCATED and row.score is None


@dataclass(frozen=True)
class BudgetStat:
    family: str  # the family label, without the budget
    budget: int
    answered: int  # final responses (harness failures other than cut-offs excluded)
    n: int  # scored answers (what accuracy is over)
    mean: float | None
    lo: float
    hi: float
    effective_length: int | None
    cut_off: int  # answers cut off while thinking (not scored)
    reasoning_tokens: int | None  # billed, summed over the responses that reported any
    reporting: int  # responses that reported a reasoning-token count
    reasoning_seen: bool  # any reasoning tokens billed (a non-zero budget with none: the control was ignored?)

    @property
    def cut_share(self) -> float | None:
        return self.cut_off / self.answered if self.answered else None

    @property
    def mean_reasoning_tokens(self) -> float | None:
        return self.reasoning_tokens / self.reporting if self.reasoning_tokens is not None and self.reporting else None

    def to_dict(self) -> dict[str, object]:
        return {"family": self.family, "budget": self.budget, "answered": self.answered, "n": self.n,
                "accuracy": self.mean, "ci95": [self.lo, self.hi], "effective_length": self.effective_length,
                "cut_off_while_thinking": self.cut_off, "cut_off_share": self.cut_share,
                "reasoning_tokens_billed": self.reasoning_tokens, "responses_reporting_reasoning_tokens": self.reporting,
                "mean_reasoning_tokens": self.mean_reasoning_tokens}


def budget_stats(rows: Iterable[ResultRow], profiles: Iterable[Profile] = (),
                 threshold: float = DEFAULT_THRESHOLD) -> list[BudgetStat]:
    """One :class:`BudgetStat` per (family, budget), in family then budget order.

    ``rows`` are the run's rows as stored (not relabelled); ``profiles`` the per-budget
    profiles (labels ``FAMILY@thinkB``) whose effective lengths are reported."""
    eff = {p.family: p.effective_length for p in profiles}
    groups: dict[tuple[str, int], list[ResultRow]] = defaultdict(list)
    for r in rows:
        if r.reasoning_budget is not None:
            groups[(r.family, r.reasoning_budget)].append(r)
    out = []
    for (family, budget), group in sorted(groups.items()):
        cut = sum(1 for r in group if cut_while_thinking(r))
        scored = [float(r.score) for r in group if not is_harness_failure(r) and r.score is not None]
        answered = len(scored) + cut
        successes = math.fsum(scored)
        lo, hi = wilson_interval(successes, len(scored))
        billed = [r.reasoning_tokens for r in group if r.reasoning_tokens is not None]
        out.append(BudgetStat(family, budget, answered, len(scored), successes / len(scored) if scored else None,
                              lo, hi, eff.get(budget_family(family, budget)), cut, sum(billed) if billed else None,
                              len(billed), any(billed)))
    return out


def budget_notes(stats: list[BudgetStat]) -> list[str]:
    """What a reader must know about the budgets: cut-offs, and budgets that bought no thinking."""
    notes = []
    for s in stats:
        if s.cut_off:
            notes.append(f"{s.family} at reasoning budget {budget_label(s.budget)}: {s.cut_off} of {s.answered} "
                         "answers were cut off while thinking (output_truncated: the budget ran out before an answer; "
                         "left out of accuracy, never scored as wrong); a larger budget lets them finish")
        if s.budget > 0 and s.reporting and not s.reasoning_seen:
            notes.append(f"{s.family} at reasoning budget {budget_label(s.budget)}: no reasoning tokens were billed "
                         "in any answer: the server or model may ignore this control (see docs/reasoning.md)")
    return notes
