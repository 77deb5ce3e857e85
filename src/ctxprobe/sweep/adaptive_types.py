"""The adaptive sweep's state and results: one length, one family, the whole run.

Split from :mod:`ctxprobe.sweep.adaptive` (the loop), which re-exports every name here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ctxprobe.analysis.sequential import decide, evidence

__all__ = ["AdaptiveResult", "FamilyDecision", "LengthState", "coarse_depths", "length_state"]


@dataclass(frozen=True)
class LengthState:
    """One length of one family after a round (pooled over the coarse depths, whole repetitions)."""

    length: int
    reps: int  # repetitions per depth planned so far
    n: int  # scored cases in complete repetitions
    mean: float | None
    log_pass: float  # log evidence that accuracy >= bar (decides at log(1/pass level))
    log_fail: float  # log evidence that accuracy < bar (decides at log(1/fail level))
    state: str  # "pass" | "fail" | "open" | "unsent" (no case planned: not needed so far)


@dataclass(frozen=True)
class FamilyDecision:
    family: str
    threshold: float | None
    decided: bool
    effective_length: int | None  # on every measured length, bisected ones included
    grid_effective_length: int | None  # on the spec's lengths only: comparable with a fixed grid
    lengths: list[LengthState]


@dataclass(frozen=True)
class AdaptiveResult:
    run_id: str
    store_path: Path
    decided: bool
    stop_reason: str  # "confident" | "budget" | "max_reps" | "max_rounds"
    rounds: int
    cases: int  # cases measured (harness failures included: they were sent)
    tokens_spent: int  # prompt tokens of those cases, as built
    token_budget: int
    confidence: float
    depths: list[float]
    families: list[FamilyDecision] = field(default_factory=list)
    lengths_tested: int = 0  # K of the correction across lengths

    def lines(self) -> list[str]:
        from ctxprobe.spec.units import fmt_tokens

        def eff(v: int | None) -> str:
            return fmt_tokens(v) if v is not None else "none"

        verdict = "confident" if self.decided else "NOT confident"
        out = [f"adaptive run {self.run_id}: {verdict} ({self.stop_reason}) after {self.rounds} rounds, "
               f"{self.cases} cases, {self.tokens_spent:,} of {self.token_budget:,} budgeted prompt tokens"]
        for f in self.families:
            states = ", ".join(f"{fmt_tokens(s.length)}:{s.state}" + (f" ({s.n})" if s.n else "") for s in f.lengths)
            what = "effective length" if f.decided else "observed effective length (undecided)"
            out.append(f"  {f.family}: {what} {eff(f.effective_length)} "
                       f"(always-valid test, P(confident and wrong) <= {1 - self.confidence:.0%} over "
                       f"{self.lengths_tested} lengths; {states})")
        return out


def coarse_depths(depths: list[float], k: int = 3) -> list[float]:
    """``k`` depths spread over the spec's: first, last and evenly between."""
    ordered = sorted(depths)
    if len(ordered) <= k:
        return ordered
    if k == 1:
        return [ordered[len(ordered) // 2]]
    return sorted({ordered[round(i * (len(ordered) - 1) / (k - 1))] for i in range(k)})


def length_state(rep_means: list[float], per_rep: int, reps: int, length: int, threshold: float | None,
                 pass_level: float, fail_level: float) -> LengthState:
    """Classify one length from its whole repetitions' mean scores by the always-valid test."""
    n = len(rep_means) * per_rep
    mean = math.fsum(rep_means) / len(rep_means) if rep_means else None
    if not rep_means:
        return LengthState(length, reps, 0, None, 0.0, 0.0, "open" if reps else "unsent")
    if threshold is None:
        return LengthState(length, reps, n, mean, -1e300, 1e300, "fail")
    log_pass, log_fail = evidence(rep_means, per_rep, threshold)
    state = decide(rep_means, per_rep, threshold, pass_level, fail_level)
    return LengthState(length, reps, n, mean, _finite(log_pass), _finite(log_fail), state)


def _finite(x: float) -> float:
    """Stored as JSON in the run's meta: no infinities."""
    return max(-1e300, min(1e300, x))
