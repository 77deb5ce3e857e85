"""Distractor tolerance: how many same-form look-alikes a family tolerates at the bar.

A run with the distractor count as a grid axis (``--param niah.distractors=0,1,3,10,30``:
labels ``niah~distractors0`` …, :mod:`ctxprobe.spec.param_axis`) holds, per count, the same
seeded cases with that many look-alike needles around the asked one. Per count the cases
are pooled over depths and over the lengths where the family is reliable with no (the
fewest) look-alikes (the reference label's interval's lower end; its shortest length when
it is reliable at none), so that a length failure is not read as a distractor failure.

The tolerance is the effective-length rule walked along the count instead of the length
(:mod:`ctxprobe.analysis.efflength`): the lower end is the most look-alikes up to which
every count's one-sided Clopper–Pearson lower bound (alpha/2) clears the bar, the upper
end the walk on upper bounds at alpha/(2K) (K counts), so P(lo ≤ true tolerance ≤ hi) ≥
95% for any true accuracies. "Tolerates up to N look-alikes" is said of the lower end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ctxprobe.analysis.efflength import EffectiveLength, effective_length_family, evidence_by_family
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.rows import ResultRow
from ctxprobe.core.variant import split_label

__all__ = ["AXIS", "CountPoint", "DistractorTolerance", "distractor_axes", "distractor_tolerance"]

#: The family parameter read as the look-alike count.
AXIS = "distractors"


@dataclass(frozen=True)
class CountPoint:
    """One count of look-alikes: pooled accuracy with its Wilson 95% interval."""

    count: int
    label: str
    n: int
    mean: float | None
    lo: float
    hi: float


@dataclass(frozen=True)
class DistractorTolerance:
    family: str  # the base family (``niah``)
    bar: float
    lo: int | None  # tolerates up to this many look-alikes (None: not even the fewest tested)
    hi: int | None
    point: int | None  # the walk on observed means
    curve: tuple[CountPoint, ...]
    lengths: tuple[int, ...]  # the lengths pooled
    confidence: float = 0.95

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(p.count for p in self.curve)

    def not_run(self) -> list[int]:
        """The planned counts with no case measured yet (a run under way)."""
        return [p.count for p in self.curve if not p.n]

    def labels(self) -> dict[int, str]:
        return {p.count: p.label for p in self.curve}

    def line(self) -> str:
        """"niah: tolerates up to 10 look-alikes at the bar 0.856 (95%: 10-30; …)"."""
        pct = f"{self.confidence * 100:g}%"
        upto = f"prompts up to {max(self.lengths):,} tokens" if self.lengths else "no length measured"
        most = max(self.counts)
        if self.lo is None:
            head = f"tolerates no tested count of look-alikes at the bar {self.bar:g} ({pct})"
        else:
            head = f"tolerates up to {self.lo} look-alike{'s' if self.lo != 1 else ''} at the bar {self.bar:g} ({pct})"
        def end(x: int | None) -> str:
            return f"below {min(self.counts)}" if x is None else str(x)

        measured = [p.count for p in self.curve if p.n]
        unrun = self.not_run()
        if measured and self.hi == max(measured) and any(c > self.hi for c in unrun):
            span = f"; {pct} interval from {end(self.lo)} (its upper end waits on the counts not yet run)"
        else:
            span = f"; {pct} interval {end(self.lo)}–{end(self.hi)}"
        if self.lo == most:
            more = " (the most tested: more were not tried)"
        elif self.lo is not None and measured and self.lo == max(measured) and unrun:
            # a run still under way: the planned counts past it are not yet measured, not failed
            more = f" (the most measured so far: {', '.join(map(str, unrun))} not yet run)"
        else:
            more = ""
        curve = ", ".join(f"{p.count}: {'—' if p.mean is None else f'{p.mean:.2f}'}" for p in self.curve)
        return f"{self.family}: {head}{more}{span}; accuracy by look-alikes {curve}; {upto}"

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "bar": self.bar, "lo": self.lo, "hi": self.hi, "point": self.point,
                "confidence": self.confidence, "lengths": list(self.lengths), "not_run": self.not_run(),
                "line": self.line(),
                "rule": "counts walked like lengths: lower end by one-sided Clopper-Pearson lower bounds at alpha/2, "
                        "upper end by upper bounds at alpha/(2K); pooled over depths and the lengths where the "
                        "fewest look-alikes clear the bar",
                "curve": [{"count": p.count, "label": p.label, "n": p.n, "mean": p.mean, "lo": p.lo, "hi": p.hi}
                          for p in self.curve]}


def distractor_axes(families: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[int, str]]:
    """Base family → {look-alike count: label} for every family the spec measured at two
    counts or more (a label's ``distractors`` parameter; 0 when it sets none)."""
    found: dict[str, dict[int, str]] = {}
    for label, params in families.items():
        params = params or {}
        base = str(params.get("family") or split_label(label)[0])
        count = params.get(AXIS, 0)
        if isinstance(count, int) and not isinstance(count, bool):
            found.setdefault(base, {}).setdefault(count, label)
    return {f: dict(sorted(c.items())) for f, c in found.items() if len(c) > 1}


def distractor_tolerance(rows: Iterable[ResultRow], families: Mapping[str, Mapping[str, Any]],
                         intervals: Mapping[str, EffectiveLength], thresholds: Mapping[str, float], *,
                         bar: float, confidence: float = 0.95) -> list[DistractorTolerance]:
    """One :class:`DistractorTolerance` per family measured along the look-alike axis."""
    rows = list(rows)
    out = []
    for base, labels in sorted(distractor_axes(families).items()):
        ref = labels[min(labels)]
        lengths = sorted({r.length for r in rows if r.family == ref})
        if not lengths:
            continue
        reliable = intervals[ref].lo if ref in intervals else None
        pooled = tuple(L for L in lengths if L <= reliable) if reliable is not None else (lengths[0],)
        count_of = {label: c for c, label in labels.items()}
        mine = [replace(r, family=base, length=count_of[r.family]) for r in rows
                if r.family in count_of and r.length in pooled]
        evidence = evidence_by_family(mine).get(base, [])
        if not evidence:
            continue
        threshold = thresholds.get(ref, bar)
        walked = effective_length_family(base, evidence, threshold=threshold, confidence=confidence, draws=1,
                                         unit="look-alikes")
        curve = []
        for ev in evidence:
            lo, hi = wilson_interval(ev.successes, ev.n) if ev.n else (0.0, 1.0)
            curve.append(CountPoint(ev.length, labels[ev.length], ev.n, ev.mean, lo, hi))
        # every planned count is on the curve, one not yet measured with no cases (shown "—")
        measured = {p.count for p in curve}
        curve += [CountPoint(c, label, 0, None, 0.0, 1.0) for c, label in labels.items() if c not in measured]
        curve.sort(key=lambda p: p.count)
        out.append(DistractorTolerance(base, threshold, walked.lo, walked.hi, walked.point, tuple(curve), pooled,
                                       confidence))
    return out
