"""Accuracy intervals for a family whose cases were sent k times (a decoding variant's
``samples=k``): the k samples of a case hold one prompt, so they are not k independent
cases, and a Wilson interval over every sample is too narrow (a prompt the model reads
badly fails most of its samples at once).

A family is *sampled* when some case of it holds two or more stored samples (ids
``…/s0`` … ``…/s{k-1}``, :attr:`ResultRow.sample`). Its accuracies are the plain means over
the measured samples, as before; its intervals treat each case as a cluster of its
samples, with the phone book's cluster-aware interval (:mod:`ctxprobe.analysis.clustered`):
the exact interval at the effective count n/deff, Kish's design effect taken at its 95%
upper bound and kept between 1 and the samples per case, with one pseudo-case at 1/2 in
the spread between cases (so a cell near 0 or 1 whose rare hard cases are missing from the
draw does not pass for uncorrelated: measured in ``benchmarks/coverage_sampled.py``). The
effective-length bounds use the same effective counts. A family sent once per case (no ``samples``, or ``samples=1``)
is not sampled: every number stays as it was.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from ctxprobe.analysis.clustered import clustered_interval, design_effect
from ctxprobe.core.outcome import HARNESS_OUTCOMES
from ctxprobe.core.rows import ResultRow

__all__ = ["INTERVAL", "CaseKey", "case_key", "case_means", "clustered_accuracy", "n_label", "sample_clusters",
           "sampled_deff", "sampled_families"]

#: How a sampled family's intervals are computed, in words (JSON, captions).
INTERVAL = ("clustered by case (a case's k samples are one cluster): exact interval at n/deff, Kish's design "
            "effect at its 95% upper bound with one pseudo-case at 1/2, between 1 and the samples per case")

CaseKey = tuple[str, int, float, int, int | None]


def case_key(row: ResultRow) -> CaseKey:
    """What a case's samples share: family label, cell, repetition, reasoning budget."""
    return (row.family, row.length, row.depth, row.rep, row.reasoning_budget)


def sampled_families(rows: Iterable[ResultRow]) -> frozenset[str]:
    """Family labels with some case stored as two or more samples."""
    counts = Counter(case_key(r) for r in rows if r.sample is not None)
    return frozenset(key[0] for key, c in counts.items() if c > 1)


def _measured(row: ResultRow) -> float | None:
    return None if row.score is None or row.outcome in HARNESS_OUTCOMES else float(row.score)


def sample_clusters(rows: Iterable[ResultRow]) -> list[tuple[float, int]]:
    """(sum of the measured samples' scores, measured samples) per case, in first-seen
    order; a case none of whose samples was measured (harness failures) is left out."""
    found: dict[CaseKey, list[float]] = defaultdict(list)
    for row in rows:
        if (score := _measured(row)) is not None:
            found[case_key(row)].append(score)
    return [(math.fsum(scores), len(scores)) for scores in found.values()]


def clustered_accuracy(clusters: Sequence[tuple[float, int]], alpha: float = 0.05,
                       ) -> tuple[float | None, float, float]:
    """(mean over samples, lo, hi): the two-sided ``1 − alpha`` interval clustered by case;
    (None, 0, 1) when nothing was measured."""
    if not clusters:
        return (None, 0.0, 1.0)
    p, lo, hi = clustered_interval([s for s, _ in clusters], [m for _, m in clusters], alpha, pseudo=True)
    return (p, lo, hi)


def sampled_deff(clusters: Sequence[tuple[float, int]], alpha: float = 0.05) -> float:
    """The design effect the interval divides the sample count by (1 without clusters)."""
    return design_effect([s for s, _ in clusters], [m for _, m in clusters], alpha, pseudo=True) if clusters else 1.0


def case_means(rows: Iterable[ResultRow]) -> list[ResultRow]:
    """One row per case: a sampled case's measured samples averaged into one score (its
    first measured sample's fields otherwise); a case none of whose samples was measured
    keeps its first row (a harness failure). Rows sent once pass through unchanged."""
    out: list[ResultRow] = []
    groups: dict[CaseKey, list[ResultRow]] = {}
    for row in rows:
        if row.sample is None:
            out.append(row)
        else:
            groups.setdefault(case_key(row), []).append(row)
    for group in groups.values():
        measured = [(r, s) for r in group if (s := _measured(r)) is not None]
        if not measured:
            out.append(group[0])
            continue
        mean = math.fsum(s for _, s in measured) / len(measured)
        first = measured[0][0]
        out.append(ResultRow(first.family, first.length, first.depth, first.rep, first.outcome, mean,
                             first.token_count, first.reasoning_budget, first.reasoning_tokens))
    return out


def n_label(n: int, cases: int | None) -> str:
    """``20`` for cases sent once; ``20×5`` for 20 cases of 5 samples (``20×4.9`` when some
    samples were not measured)."""
    if cases is None:
        return str(n)
    if cases == 0:
        return "0"
    return f"{cases}×{n // cases}" if n % cases == 0 else f"{cases}×{n / cases:.1f}"
