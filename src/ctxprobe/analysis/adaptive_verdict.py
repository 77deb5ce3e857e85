"""The effective length of an adaptively collected run, from the walk's always-valid tests.

An adaptive sweep (``run --adaptive``) chooses how many cases each length gets from the
answers so far. A fixed-n interval (Wilson, Clopper–Pearson) over such cells is not valid:
the sample size depends on the data, and the walk stops exactly when the data happen to
look good. Its cells are read here with the walk's own tests
(:mod:`ctxprobe.analysis.sequential`), which hold under optional stopping: a length passes
when the evidence that its depth-averaged accuracy clears the bar reaches 1/(α/2), fails
when the evidence against reaches 1/(α/2K), and is otherwise *open*; a length no case was
sent to is *untested*. So the interval is

* ``lo``: the last length of the unbroken run of passes from the shortest;
* ``hi``: the length before the first confidently failing one; without one, the longest
  length of the grid (open and untested lengths may still clear the bar).

P(lo ≤ E ≤ hi) ≥ 1 − α for the effective length E on the walk's lengths, at any true
accuracies, by Ville's inequality (the same argument as the walk's own guarantee). The
tests are recomputed at the bar asked for, not the one the walk ran with: Ville's bound
holds at every time, so stopping by another bar's evidence leaves it valid.

Only whole repetitions at the walk's depths count, as in the walk; a case sent k times
(``samples=k``) counts once, at the mean of its samples (a score in [0, 1] with the
case's accuracy as its expectation, so the tests hold as they do for partial scores).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ctxprobe.analysis.efflength import EffectiveLength
from ctxprobe.analysis.grid import model_score
from ctxprobe.analysis.sampled import case_means
from ctxprobe.analysis.sequential import decide, levels
from ctxprobe.core.outcome import Outcome
from ctxprobe.core.rows import ResultRow
from ctxprobe.core.runmeta import RunMeta

__all__ = ["METHOD", "adaptive_intervals", "is_adaptive", "length_states"]

METHOD = ("always-valid sequential tests of the adaptive walk (test supermartingales, Ville's inequality): a length "
          "passes at alpha/2, fails at alpha/(2K); open and untested lengths are not decided")


def adaptive_info(meta: RunMeta | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The adaptive walk's record of a run (its plan and decision), None for a fixed grid.
    ``meta``: the run's typed meta, or its stored JSON."""
    info = meta.adaptive if isinstance(meta, RunMeta) else (meta or {}).get("adaptive")
    return info if isinstance(info, dict) else None


def is_adaptive(meta: RunMeta | Mapping[str, Any] | None) -> bool:
    """Whether a run's cases were collected by the adaptive walk (its meta says so)."""
    return adaptive_info(meta) is not None


def _rep_means(rows: Iterable[ResultRow], family: str, reps: Mapping[int, int], depths: list[float],
               ) -> dict[int, list[float]]:
    by_rep: dict[tuple[int, int], dict[float, float]] = {}
    for r in case_means(rows):  # a case sent k times counts once, at its samples' mean
        if (r.family == family and r.length in reps and r.rep < reps[r.length] and r.depth in depths
                and (score := model_score(r)) is not None):
            by_rep.setdefault((r.length, r.rep), {})[r.depth] = float(score)
    out: dict[int, list[float]] = {length: [] for length in reps}
    for (length, _rep), scores in sorted(by_rep.items()):
        if len(scores) == len(depths):
            out[length].append(math.fsum(scores.values()) / len(scores))
    return out


def length_states(rows: Iterable[ResultRow], family: str, reps: Mapping[int, int], depths: list[float],
                  threshold: float, pass_level: float, fail_level: float,
                  ) -> list[tuple[int, str, float | None, int]]:
    """Per length (ascending): (length, "pass" | "fail" | "open" | "untested", mean, cases)."""
    per_length = _rep_means(rows, family, reps, depths)
    out = []
    for length in sorted(reps):
        means = per_length[length]
        mean = math.fsum(means) / len(means) if means else None
        if not reps[length]:
            state = "untested"
        elif not means:
            state = "open"
        elif not math.isfinite(threshold):
            state = "fail"  # a relative bar with nothing to degrade from: no length clears it
        else:
            state = decide(means, len(depths), threshold, pass_level, fail_level)
        out.append((length, state, mean, len(means) * len(depths)))
    return out


def adaptive_intervals(rows: list[ResultRow], meta: RunMeta | Mapping[str, Any], grid_lengths: Iterable[int],
                       thresholds: Mapping[str, float], units: Mapping[str, str] | None = None,
                       ) -> dict[str, EffectiveLength]:
    """Per family of an adaptive run (``meta``: the run's meta, ``grid_lengths``: its spec's
    lengths): its effective length by the walk's tests (see the module doc)."""
    info = adaptive_info(meta)
    if info is None:
        raise ValueError("adaptive_intervals: the run has no adaptive record")
    confidence = float(info.get("confidence", 0.95))
    depths = [float(d) for d in info.get("depths", [])]
    plan = {f: {int(k): int(v) for k, v in r.items()} for f, r in (info.get("reps") or {}).items()}
    k = int(info.get("lengths_tested") or 0)
    n_grid = max(1, len(set(grid_lengths)))
    bisect = max(0, k - n_grid)
    pass_level, fail_level = levels(1.0 - confidence, n_grid, bisect)
    truncated = {(r.family, r.length) for r in rows if r.outcome == Outcome.INPUT_TRUNCATED}
    out: dict[str, EffectiveLength] = {}
    for family, reps in sorted(plan.items()):
        bar = thresholds.get(family, 0.856)
        states = length_states(rows, family, reps, depths, bar, pass_level, fail_level)
        lo = hi = point = None
        lo_open = point_open = True
        ever_failed = False
        for length, state, mean, _n in states:
            if lo_open and state == "pass" and (family, length) not in truncated:
                lo = length
            else:
                lo_open = False
            if point_open and mean is not None and mean >= bar - 1e-12 and (family, length) not in truncated:
                point = length
            else:
                point_open = False
            if state == "fail" and not ever_failed:
                ever_failed = True
            if not ever_failed:
                hi = length
        out[family] = EffectiveLength(
            family=family, threshold=bar, point=point, lo=lo, hi=hi, confidence=confidence,
            lengths=tuple(s[0] for s in states), p_clear={},
            not_measured=tuple(s[0] for s in states if s[1] in ("untested", "open") and s[2] is None),
            truncated=tuple(sorted(length for f, length in truncated if f == family)),
            min_cell_n=min((s[3] // max(1, len(depths)) for s in states if s[3]), default=0),
            unit=(units or {}).get(family, "tokens"),
            untested=tuple(s[0] for s in states if s[1] == "untested"), method=METHOD,
            states={s[0]: s[1] for s in states})
    return out
