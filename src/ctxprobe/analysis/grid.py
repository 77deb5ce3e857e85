"""Grid statistics and effective context length.

Input is a flat list of :class:`ResultRow` (one scored case each); output is, per task
family, the accuracy of every (length, depth) cell and of every length pooled over depths,
each with a Wilson 95% interval (clustered by case for a family whose cases were sent k
times: :mod:`ctxprobe.analysis.sampled`), plus the effective length: the longest length at which
the model still clears the bar, walking up from the shortest and stopping at the first
failure (RULER's rule), so a lucky pass at a long length cannot hide a failure below it.

Harness failures (``input_truncated``, ``error``) say nothing about the model: they are
left out of ``n`` and the mean but still counted in ``outcomes`` and ``n_excluded`` so a
report can show how much of a cell was actually measured.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ctxprobe.core.rows import ResultRow
from ctxprobe.analysis.sampled import clustered_accuracy, sample_clusters, sampled_families
from ctxprobe.analysis.sampled import n_label as _n_label
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.outcome import HARNESS_OUTCOMES, OUTCOMES, Outcome

#: RULER's bar: Llama-2-7B's mean score at 4K tokens.
DEFAULT_THRESHOLD = 0.856

#: Slack for float rounding when comparing a mean with the threshold: a mean that is the
#: threshold on paper (e.g. 107/125 vs 0.856, or a sum of partial scores) must pass.
_EPS = 1e-12


@dataclass(frozen=True)
class CellStat:
    """Accuracy of one (family, length, depth) cell.

    ``mean`` is None when ``n == 0`` (every case was a harness failure or there were none):
    an unmeasured cell is not a cell with accuracy 0. ``lo``/``hi`` are then (0, 1).
    """

    family: str
    length: int
    depth: float
    n: int  # scored cases (harness failures excluded)
    mean: float | None
    lo: float
    hi: float
    outcomes: dict[str, int] = field(default_factory=dict)  # every case, harness ones too
    n_excluded: int = 0  # harness failures, not in n
    #: A sampled family (``samples=k``): the cases ``n``'s samples belong to, and the
    #: interval is clustered by case (:mod:`ctxprobe.analysis.sampled`); None: sent once.
    cases: int | None = None

    @property
    def n_label(self) -> str:
        """``n``, or cases × samples (``20×5``) for a sampled family."""
        return _n_label(self.n, self.cases)


@dataclass(frozen=True)
class LengthStat:
    """Accuracy at one length, pooled over every depth (same conventions as CellStat)."""

    family: str
    length: int
    n: int
    mean: float | None
    lo: float
    hi: float
    outcomes: dict[str, int] = field(default_factory=dict)
    n_excluded: int = 0
    cases: int | None = None  # as CellStat.cases

    @property
    def n_label(self) -> str:
        return _n_label(self.n, self.cases)


@dataclass(frozen=True)
class Profile:
    """Everything the report needs about one family."""

    family: str
    threshold: float
    effective_length: int | None
    lengths: list[LengthStat]
    cells: list[CellStat]
    #: Adaptively collected runs only: the walk's verdict per length ("pass", "fail", "open",
    #: "untested"); fixed-n intervals do not apply to such cells and are not shown.
    verdicts: dict[int, str] | None = None

    @property
    def sampled(self) -> bool:
        """Whether the family's cases were sent k times (intervals clustered by case)."""
        return any(s.cases is not None for s in self.lengths)

    @property
    def depths(self) -> list[float]:
        return sorted({c.depth for c in self.cells})


def is_harness_failure(row: ResultRow) -> bool:
    """True when the row measures the harness, not the model.

    A missing score is taken as a harness failure too, so a row that slipped through
    unscored can never count as a model miss.
    """
    return row.score is None or row.outcome in HARNESS_OUTCOMES


def model_score(row: ResultRow) -> float | None:
    """The row's score when it measures the model; None for a harness failure."""
    return None if is_harness_failure(row) else row.score


@dataclass
class _Acc:
    """Running totals for one group of rows."""

    n: int = 0
    scores: list[float] = field(default_factory=list)
    n_excluded: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    rows: list[ResultRow] = field(default_factory=list)

    def add(self, row: ResultRow) -> None:
        self.outcomes[row.outcome] = self.outcomes.get(row.outcome, 0) + 1
        self.rows.append(row)
        score = model_score(row)
        if score is None:
            self.n_excluded += 1
        else:
            self.n += 1
            self.scores.append(float(score))

    def summary(self, sampled: bool,
                ) -> tuple[int, float | None, float, float, dict[str, int], int, int | None]:
        """The group's (n, mean, lo, hi, outcomes, n_excluded, cases); ``sampled``: the
        interval is clustered by case, and ``cases`` counts them (else None)."""
        successes = math.fsum(self.scores)  # fsum: partial scores must not drift
        mean = successes / self.n if self.n else None
        if sampled:
            clusters = sample_clusters(self.rows)
            _, lo, hi = clustered_accuracy(clusters)
            return self.n, mean, lo, hi, _ordered(self.outcomes), self.n_excluded, len(clusters)
        lo, hi = wilson_interval(successes, self.n)
        return self.n, mean, lo, hi, _ordered(self.outcomes), self.n_excluded, None


def _ordered(counts: dict[str, int]) -> dict[str, int]:
    """Outcome counts in taxonomy order (unknown labels last, alphabetically)."""
    rank: dict[str, int] = {o: i for i, o in enumerate(OUTCOMES)}
    return dict(sorted(counts.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def cell_stats(rows: Iterable[ResultRow]) -> list[CellStat]:
    """Per-(family, length, depth) accuracy, sorted by family, length, depth."""
    rows = list(rows)
    sampled = sampled_families(rows)
    groups: dict[tuple[str, int, float], _Acc] = defaultdict(_Acc)
    for row in rows:
        groups[(row.family, row.length, row.depth)].add(row)
    return [
        CellStat(family, length, depth, *acc.summary(family in sampled))
        for (family, length, depth), acc in sorted(groups.items())
    ]


def length_stats(rows: Iterable[ResultRow]) -> list[LengthStat]:
    """Per-(family, length) accuracy pooled over depths, sorted by family, length.

    Pooling weights each case equally, so a depth with more scored cases weighs more;
    sweeps run the same repetitions at every depth, so that is the plain average there.
    """
    rows = list(rows)
    sampled = sampled_families(rows)
    groups: dict[tuple[str, int], _Acc] = defaultdict(_Acc)
    for row in rows:
        groups[(row.family, row.length)].add(row)
    return [
        LengthStat(family, length, *acc.summary(family in sampled))
        for (family, length), acc in sorted(groups.items())
    ]


def clears(mean: float | None, threshold: float) -> bool:
    """The bar: ``mean >= threshold`` (up to float rounding). An unmeasured mean never clears."""
    return mean is not None and mean >= threshold - _EPS


def walk_levels(points: Iterable[tuple[int, float | None]], threshold: float) -> int | None:
    """The last level before the first, in the order given, whose value misses the bar or
    is unmeasured (None); None when the first already stops the walk."""
    best: int | None = None
    for level, value in points:
        if not clears(value, threshold):
            break
        best = level
    return best


def measured(stat: LengthStat) -> bool:
    """False when nothing was scored at this length or the server truncated any of its prompts."""
    return stat.n > 0 and not stat.outcomes.get(Outcome.INPUT_TRUNCATED)


def effective_length(
    stats: list[LengthStat], threshold: float = DEFAULT_THRESHOLD
) -> int | None:
    """Longest length reached before the first one that fails the bar.

    Rule: walk the lengths in ascending order; a length *clears* when its pooled mean is
    ``>= threshold`` (equality passes). The walk stops at the first length that does not
    clear and returns the last length that did -- a pass at a longer length after a
    failure does not count, because a user sizing prompts needs every shorter length to
    work too. Returns None when even the shortest length fails.

    A length with ``n == 0`` (every case a harness failure) has no accuracy, and a length
    where the server truncated any prompt (``input_truncated``) was not measured as built:
    either neither passes nor fails, but the walk cannot vouch for anything past it, so it
    stops there and returns the previous clearing length (None if it is the shortest).

    ``stats`` must belong to one family.
    """
    families = {s.family for s in stats}
    if len(families) > 1:
        raise ValueError(f"effective_length needs one family, got {sorted(families)}")
    best: int | None = None
    for stat in sorted(stats, key=lambda s: s.length):
        if not measured(stat) or not clears(stat.mean, threshold):
            break
        best = stat.length
    return best


def profile(
    rows: Iterable[ResultRow], threshold: float = DEFAULT_THRESHOLD,
    thresholds: Mapping[str, float] | None = None,
) -> list[Profile]:
    """One :class:`Profile` per family, sorted by family name (``thresholds``: a family's
    own bar, else ``threshold``)."""
    rows = list(rows)
    cells = cell_stats(rows)
    lengths = length_stats(rows)
    out: list[Profile] = []
    for family in sorted({r.family for r in rows}):
        fam_lengths = [s for s in lengths if s.family == family]
        bar = (thresholds or {}).get(family, threshold)
        out.append(
            Profile(
                family=family,
                threshold=bar,
                effective_length=effective_length(fam_lengths, bar),
                lengths=fam_lengths,
                cells=[c for c in cells if c.family == family],
            )
        )
    return out
