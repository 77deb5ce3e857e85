"""The noise floor beside each accuracy, and whether a family's effective length stands above it.

With ``--baseline no-context`` every family has, per length, a floor: the accuracy of the
same questions with the evidence removed (label ``FAMILY@no-context``), or for MRCR the
expected score of returning a random instance of the asked key (computed per case). An
accuracy only means "the model used the context" where it exceeds that floor.

Rule, per length: the accuracy is **above the floor** when the one-sided Clopper–Pearson
lower bound of the accuracy at level ``alpha / 2`` exceeds the one-sided upper bound of
the floor at ``alpha / 2`` (strictly). If the true accuracy is at or below the true floor,
claiming "above" needs one of the two bounds to miss its own rate, so a false claim has
probability at most ``alpha`` at any sample size (for 0/1 scores; fractional scores enter
as fractional successes, which widens the bounds: the safe side). A length with no scored
case on either side, or with prompts truncated by the server, is not decided.

**Above the floor up to X**: every length from the shortest up to X is above the floor (a
conjunction of the per-length claims: it is false only if one of them is, so it keeps the
same ``alpha`` without correction). The family's effective length **stands above its
floor** when it is not longer than that; otherwise the report says at which length the
accuracy could not be told from the guess rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ctxprobe.analysis.efflength import LengthEvidence, cp_lower, cp_upper, evidence_by_family
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.baseline import main_label
from ctxprobe.core.rows import ResultRow
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.units import fmt_length

#: How each kind of floor is described in reports.
KIND_WORDS = {"no-context": "the question without its evidence",
              "random-instance": "a random instance of the asked key (MRCR v2's noise floor)"}


@dataclass(frozen=True)
class FloorLength:
    """One length: the accuracy and the floor (means, Wilson 95% intervals for display),
    the two one-sided bounds the rule compares, and the verdict (None: not decided)."""

    length: int
    n: int
    mean: float | None
    floor_n: int
    floor_mean: float | None
    floor_lo: float
    floor_hi: float
    accuracy_lower: float
    floor_upper: float
    above: bool | None


@dataclass(frozen=True)
class Floor:
    family: str
    kind: str
    confidence: float
    lengths: tuple[FloorLength, ...]
    effective_length: int | None
    above_up_to: int | None  # None: not above the floor at the shortest length

    @property
    def stands(self) -> bool | None:
        """Whether the effective length stands above the floor (None: there is no effective length)."""
        if self.effective_length is None:
            return None
        return self.above_up_to is not None and self.above_up_to >= self.effective_length

    @property
    def first_not_above(self) -> FloorLength | None:
        return next((x for x in self.lengths if not x.above), None)

    def line(self) -> str:
        pct = f"{self.confidence * 100:g}%"
        eff = self.effective_length
        if self.stands and eff is not None and self.above_up_to is not None:
            return (f"effective length {fmt_length(eff)} stands above the floor: the accuracy exceeds it at every "
                    f"length up to {fmt_length(self.above_up_to)} ({pct} confidence)")
        miss = self.first_not_above
        at = f" at {fmt_length(miss.length)}" if miss is not None else ""
        why = "not decided (nothing scored)" if miss is not None and miss.above is None else "not shown above the floor"
        if eff is None:
            return f"no effective length to check; accuracy {why}{at} ({pct} confidence)"
        return (f"effective length {fmt_length(eff)} does not stand above the floor: accuracy {why}{at} "
                f"({pct} confidence); add repetitions or read it as a guess rate")

    def to_dict(self) -> dict[str, object]:
        return {
            "family": self.family, "kind": self.kind, "what": KIND_WORDS.get(self.kind, self.kind),
            "confidence": self.confidence, "effective_length": self.effective_length,
            "above_up_to": self.above_up_to, "stands_above_floor": self.stands, "line": self.line(),
            "rule": "above at a length when the one-sided Clopper-Pearson lower bound of the accuracy (alpha/2) "
                    "exceeds the one-sided upper bound of the floor (alpha/2); up to X: every length up to X above",
            "lengths": [x.__dict__ for x in self.lengths],
        }


def above_floor(acc: LengthEvidence | None, floor: LengthEvidence | None, alpha: float) -> tuple[bool | None, float, float]:
    """The per-length rule: (above, the accuracy's lower bound, the floor's upper bound);
    a family whose cases were sent k times is counted at n/deff (clustered by case)."""
    if acc is None or floor is None or not acc.measured or not floor.measured:
        return None, 0.0, 1.0
    lower = cp_lower(*acc.effective(acc.successes, acc.n), alpha / 2)
    upper = cp_upper(*floor.effective(floor.successes, floor.n), alpha / 2)
    return lower > upper, lower, upper


def family_floor(family: str, kind: str, accuracy: list[LengthEvidence], floor: list[LengthEvidence],
                 effective: int | None, confidence: float = 0.95) -> Floor:
    if not 0.0 < confidence < 1.0:
        raise CtxprobeError(f"confidence must be between 0 and 1, got {confidence:g}")
    alpha = 1.0 - confidence
    acc_by = {e.length: e for e in accuracy}
    floor_by = {e.length: e for e in floor}
    out: list[FloorLength] = []
    up_to: int | None = None
    walking = True
    for length in sorted(acc_by):
        a, f = acc_by[length], floor_by.get(length)
        above, lower, upper = above_floor(a, f, alpha)
        lo, hi = wilson_interval(f.successes, f.n) if f is not None else (0.0, 1.0)
        out.append(FloorLength(length, a.n, a.mean, f.n if f else 0, f.mean if f else None, lo, hi, lower, upper,
                               above))
        if walking and above:
            up_to = length
        else:
            walking = False
    return Floor(family, kind, confidence, tuple(out), effective, up_to)


def floors(rows: Iterable[ResultRow], floor_rows: Iterable[ResultRow], effective: Mapping[str, int | None],
           kinds: Mapping[str, str], confidence: float = 0.95) -> dict[str, Floor]:
    """Per family with floor rows (labels ``FAMILY@no-context``, mapped back to ``FAMILY``):
    its :class:`Floor`. ``kinds`` names each family's floor kind."""
    acc = evidence_by_family(rows)
    by_family = evidence_by_family(ResultRow(main_label(r.family), r.length, r.depth, r.rep, r.outcome, r.score,
                                             r.token_count) for r in floor_rows)
    return {f: family_floor(f, kinds.get(f, "no-context"), acc.get(f, []), ev, effective.get(f), confidence)
            for f, ev in sorted(by_family.items()) if f in acc}
