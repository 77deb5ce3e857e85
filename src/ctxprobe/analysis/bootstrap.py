"""Threshold rules, the effective-length walk and the stratified resampler.

The effective length is the last length before the first one whose mean fails the bar:
the walk goes over ascending lengths and stops at the first length that fails or has no
scored case. "Clears" is ``mean >= threshold`` (equality passes), exactly grid.py's
:func:`clears`. The effective length's interval is computed in efflength.py; this module
holds the pieces the paired comparison (compare.py) and the adaptive sweep share.

Resampling scheme -- **stratified within cells** (family × length × depth): every resample
draws, with replacement, exactly as many cases from each cell as the cell holds. The sweep
fixes how many cases each depth gets; resampling a whole length instead would let the mix
of depths vary between resamples, adding variance the experiment does not have and, for a
model with a depth dip (the U shape), blurring the interval with composition noise.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from ctxprobe.analysis.grid import DEFAULT_THRESHOLD, clears
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.threshold import Bar, check_bar, check_threshold, named_bars

#: NoLiMa's relative bar: 85% of the model's own score at the shortest length.
DEFAULT_RELATIVE_FRACTION = 0.85
DEFAULT_RESAMPLES = 2000  # the paired comparison's default

_Num = TypeVar("_Num", int, float)


@dataclass(frozen=True)
class ThresholdRule:
    """How the bar is set.

    ``absolute``: the bar is ``value`` (RULER's 0.856 by default).
    ``relative``: the bar is ``value`` × the model's own pooled mean at the shortest
    length (NoLiMa: 0.85). A relative bar measures degradation, not absolute quality, so a
    model that scores 0 at its shortest length has nothing to degrade from: it gets no bar
    and no effective length.
    """

    kind: Literal["absolute", "relative"] = "absolute"
    value: float = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        if self.kind not in ("absolute", "relative"):
            raise CtxprobeError(f"unknown threshold rule '{self.kind}': use absolute or relative")
        check_threshold(self.value)

    @classmethod
    def relative(cls, fraction: float = DEFAULT_RELATIVE_FRACTION) -> ThresholdRule:
        return cls("relative", fraction)

    @classmethod
    def from_bar(cls, bar: Bar) -> ThresholdRule:
        """A spec's per-family bar (:func:`ctxprobe.spec.threshold.check_bar`) as a rule."""
        bar = check_bar(bar)
        if isinstance(bar, str):
            return cls("relative", float(bar.partition(":")[2]))
        return cls("absolute", bar)

    @classmethod
    def parse(cls, text: str) -> ThresholdRule:
        """CLI form: ``0.856`` (absolute), ``relative`` or ``relative:0.85``; by name ``ruler``
        (0.856) or ``nolima`` (relative:0.85)."""
        kind, _, raw = text.strip().partition(":")
        if kind in ("relative", "rel"):
            value = raw or str(DEFAULT_RELATIVE_FRACTION)
            rule_kind: Literal["absolute", "relative"] = "relative"
        else:
            value, rule_kind = (raw if kind == "absolute" else kind), "absolute"
        try:
            return cls(rule_kind, float(value))
        except ValueError:
            if text.strip().lower() in named_bars():  # a name: the registry is read only for one
                return cls.from_bar(text)
            raise CtxprobeError(
                f"bad threshold rule {text!r}: use a number such as 0.856, or relative[:0.85]"
            ) from None

    def resolve(self, base_score: float | None) -> float | None:
        """The bar given the mean at the shortest length (ignored by the absolute rule)."""
        if self.kind == "absolute":
            return self.value
        if base_score is None or base_score <= 0.0:
            return None
        return self.value * base_score

    def describe(self) -> str:
        if self.kind == "absolute":
            return f"mean >= {self.value:g}"
        return f"mean >= {self.value:g} x mean at the shortest length"


def walk(lengths: Sequence[int], means: Sequence[float | None], threshold: float | None) -> int | None:
    """grid.py's walk on plain numbers: the last length before the first non-clearing one.

    ``means[i]`` is None when length ``i`` has no scored case; the walk stops there.
    ``lengths`` must be ascending. A None threshold (relative rule, no base) clears nothing.
    """
    if threshold is None:
        return None
    best: int | None = None
    for length, mean in zip(lengths, means):
        if mean is None or not clears(mean, threshold):
            break
        best = length
    return best


def first_scored(means: Sequence[float | None]) -> float | None:
    """The base score of the relative rule: the shortest length that has a mean."""
    return next((m for m in means if m is not None), None)


@dataclass(frozen=True)
class Stratum:
    """One cell's scored cases: the unit the bootstrap resamples within."""

    length: int
    scores: tuple[float, ...]


class StratifiedResampler:
    """Draws, per stratum, indices of one resample (with replacement, same size).

    Shared with the paired comparison, which applies the same indices to both runs.
    """

    def __init__(self, sizes: Sequence[int], seed: int) -> None:
        self.sizes = list(sizes)
        self.rng = random.Random(seed)

    def draw(self) -> list[list[int]]:
        return [self.rng.choices(range(n), k=n) if n else [] for n in self.sizes]


def quantile(sorted_values: Sequence[_Num], q: float) -> _Num:
    """Inverted-CDF quantile: always a value that occurred (lengths are discrete)."""
    if not sorted_values:
        raise ValueError("no values")
    # smallest value whose empirical CDF reaches q; the slack keeps 0.025 × 2000 at 50
    k = math.ceil(q * len(sorted_values) - 1e-9) - 1
    return sorted_values[max(0, min(len(sorted_values) - 1, k))]


def length_means(strata: Sequence[Stratum], lengths: Sequence[int],
                 picks: Sequence[Sequence[int]] | None = None) -> list[float | None]:
    """Pooled mean per length (each case weighs the same); ``picks`` resamples each stratum."""
    sums: dict[int, float] = defaultdict(float)
    counts: dict[int, int] = defaultdict(int)
    for i, stratum in enumerate(strata):
        scores = stratum.scores
        counts[stratum.length] += len(scores)
        if picks is None or _constant(scores):
            sums[stratum.length] += sum(scores)
        else:
            sums[stratum.length] += sum(map(scores.__getitem__, picks[i]))
    return [sums[length] / counts[length] if counts[length] else None for length in lengths]


def _constant(scores: tuple[float, ...]) -> bool:
    return not scores or min(scores) == max(scores)
