"""Effective length with a bootstrap interval, and the threshold rules it is judged by.

The point value of the effective length (grid.py) is a step function of noisy cell means:
at 20 cases a cell, one unlucky case can move it a whole length. This module resamples the
cases and recomputes the effective length on every resample, giving its distribution, a
percentile interval ("effective length 32K (95%: 16K–32K)") and, per length, the share of
resamples whose mean clears the bar.

Resampling scheme -- **stratified within cells** (family × length × depth): every resample
draws, with replacement, exactly as many cases from each cell as the cell holds. The sweep
fixes how many cases each depth gets; resampling a whole length instead would let the mix
of depths vary between resamples, adding variance the experiment does not have and, for a
model with a depth dip (the U shape), blurring the interval with composition noise.

"Clears" is ``mean >= threshold`` (equality passes), exactly grid.py's :func:`clears`,
and the walk is grid.py's: ascending lengths, stop at the first length that fails or has
no scored case. Harness failures are left out, as everywhere in analysis.

Pure Python (``random``), no array library needed for this walk: a cell whose scores are
all equal (the common case: all right or all wrong) is constant under resampling and
costs nothing; 2000 resamples of a few thousand cases take well under a second.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from ctxprobe.analysis.grid import DEFAULT_THRESHOLD, clears, is_harness_failure
from ctxprobe.core.rows import ResultRow
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.threshold import check_threshold

#: NoLiMa's relative bar: 85% of the model's own score at the shortest length.
DEFAULT_RELATIVE_FRACTION = 0.85
DEFAULT_RESAMPLES = 2000

_Num = TypeVar("_Num", int, float)

#: Sort key for "no effective length" (fails at the shortest length): below every length.
_NONE = -1


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
    def parse(cls, text: str) -> ThresholdRule:
        """CLI form: ``0.856`` (absolute), ``relative`` or ``relative:0.85``."""
        kind, _, raw = text.strip().partition(":")
        if kind in ("relative", "rel"):
            value = raw or str(DEFAULT_RELATIVE_FRACTION)
            rule_kind: Literal["absolute", "relative"] = "relative"
        else:
            value, rule_kind = (raw if kind == "absolute" else kind), "absolute"
        try:
            return cls(rule_kind, float(value))
        except ValueError:
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


@dataclass(frozen=True)
class EffectiveLengthInterval:
    """Effective length of one family with its bootstrap distribution.

    ``lo``/``hi`` are the percentile interval of the resampled effective lengths (None means
    "below the shortest length"); ``distribution`` maps each effective length seen to its
    share of resamples; ``p_clear[length]`` is the share of resamples whose mean at that
    length clears the (resampled) bar -- on its own, not conditioned on the walk.
    """

    family: str
    rule: ThresholdRule
    threshold: float | None
    point: int | None
    lo: int | None
    hi: int | None
    confidence: float
    lengths: tuple[int, ...]
    distribution: dict[int | None, float]
    p_clear: dict[int, float]
    n_resamples: int
    seed: int

    def line(self) -> str:
        return format_effective_length(self.point, self.lo, self.hi, self.confidence, self.lengths)


def _tokens(n: int) -> str:
    from ctxprobe.spec.units import fmt_tokens

    return fmt_tokens(n)


def format_effective_length(point: int | None, lo: int | None, hi: int | None, confidence: float,
                            lengths: Sequence[int] = ()) -> str:
    """``effective length 32K (95%: 16K–32K)``; None reads "<512" (below the shortest length)."""
    shortest = min(lengths) if lengths else None

    def label(value: int | None) -> str:
        if value is not None:
            return _tokens(value)
        return f"<{_tokens(shortest)}" if shortest is not None else "none"

    return f"effective length {label(point)} ({confidence * 100:g}%: {label(lo)}–{label(hi)})"


def quantile(sorted_values: Sequence[_Num], q: float) -> _Num:
    """Inverted-CDF quantile: always a value that occurred (lengths are discrete)."""
    if not sorted_values:
        raise ValueError("no values")
    # smallest value whose empirical CDF reaches q; the slack keeps 0.025 × 2000 at 50
    k = math.ceil(q * len(sorted_values) - 1e-9) - 1
    return sorted_values[max(0, min(len(sorted_values) - 1, k))]


def percentile_interval(values: Iterable[int | None], confidence: float) -> tuple[int | None, int | None]:
    """Equal-tailed interval of a discrete statistic; None sorts below every length."""
    keyed = sorted(_NONE if v is None else v for v in values)
    alpha = 1.0 - confidence
    lo, hi = quantile(keyed, alpha / 2), quantile(keyed, 1.0 - alpha / 2)
    return (None if lo == _NONE else lo), (None if hi == _NONE else hi)


def strata_by_family(rows: Iterable[ResultRow]) -> dict[str, list[Stratum]]:
    """Scored cases grouped into cells, per family, ordered by length then depth."""
    cells: dict[tuple[str, int, float], list[float]] = defaultdict(list)
    seen_lengths: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        seen_lengths[row.family].add(row.length)
        if not is_harness_failure(row):
            cells[(row.family, row.length, row.depth)].append(float(row.score))  # type: ignore[arg-type]
    out: dict[str, list[Stratum]] = {f: [] for f in sorted(seen_lengths)}
    for (family, length, _depth), scores in sorted(cells.items()):
        out[family].append(Stratum(length, tuple(scores)))
    # A length measured only by harness failures still stops the walk: keep it, empty.
    for family, lengths in seen_lengths.items():
        have = {s.length for s in out[family]}
        out[family].extend(Stratum(length, ()) for length in lengths - have)
        out[family].sort(key=lambda s: s.length)
    return out


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


def bootstrap_family(family: str, strata: Sequence[Stratum], *, rule: ThresholdRule, n_resamples: int,
                     seed: int, confidence: float) -> EffectiveLengthInterval:
    """One family's interval (see :func:`bootstrap_effective_length`)."""
    lengths = sorted({s.length for s in strata})
    means = length_means(strata, lengths)
    threshold = rule.resolve(first_scored(means))
    point = walk(lengths, means, threshold)
    resampler = StratifiedResampler([0 if _constant(s.scores) else len(s.scores) for s in strata], seed)
    values: list[int | None] = []
    cleared = dict.fromkeys(lengths, 0)
    for _ in range(n_resamples):
        m = length_means(strata, lengths, resampler.draw())
        bar = rule.resolve(first_scored(m))
        values.append(walk(lengths, m, bar))
        for length, mean in zip(lengths, m):
            if bar is not None and mean is not None and clears(mean, bar):
                cleared[length] += 1
    lo, hi = percentile_interval(values, confidence)
    dist: dict[int | None, int] = defaultdict(int)
    for v in values:
        dist[v] += 1
    ordered = sorted(dist.items(), key=lambda kv: _NONE if kv[0] is None else kv[0])
    return EffectiveLengthInterval(
        family=family, rule=rule, threshold=threshold, point=point, lo=lo, hi=hi, confidence=confidence,
        lengths=tuple(lengths), distribution={k: c / n_resamples for k, c in ordered},
        p_clear={length: c / n_resamples for length, c in cleared.items()},
        n_resamples=n_resamples, seed=seed,
    )


def bootstrap_effective_length(rows: Iterable[ResultRow], *, rule: ThresholdRule | None = None,
                               n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                               confidence: float = 0.95) -> list[EffectiveLengthInterval]:
    """Per family: effective length, its bootstrap distribution and percentile interval.

    Seeded, so the same rows always give the same interval (a report must not change
    between two renderings of one run). Under the relative rule the bar is recomputed on
    every resample, so the uncertainty of the base score is carried into the interval.
    """
    if n_resamples < 1:
        raise CtxprobeError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise CtxprobeError(f"confidence must be between 0 and 1, got {confidence:g}")
    rule = rule or ThresholdRule()
    return [
        bootstrap_family(family, strata, rule=rule, n_resamples=n_resamples, seed=seed, confidence=confidence)
        for family, strata in strata_by_family(rows).items()
    ]
