"""PI-LLM's curve from a run of ``updates``: accuracy against ln U (updates per key).

For each family label, the cases are grouped by U; each point is the mean case score (the
share of keys answered with their final value) with its 95% interval (Wilson's over the
cases, the summed scores as successes: ctxprobe's rule for partial credit, on the wide
side) and the per-key outcome counts (``stale``: an overwritten value). The fit is
ordinary least squares of the case score on ln U; its 95% interval is a percentile bootstrap that resamples cases within each (length, K, U)
stratum (the design fixes how many cases each holds; K pooled in the fit, each K's share
kept), 2000 resamples from a fixed seed, so
the same records always give the same interval. Harness failures (no score) are left out.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.outcome import HARNESS_OUTCOMES
from ctxprobe.core.records import CaseRecord

RESAMPLES = 2000


@dataclass(frozen=True)
class Point:
    updates: int
    n: int
    accuracy: float
    key_outcomes: dict[str, int]
    ci: tuple[float, float] = (0.0, 1.0)  # 95%, Wilson over the cases


@dataclass(frozen=True)
class Fit:
    slope: float | None  # accuracy per unit of ln U
    low: float | None
    high: float | None
    intercept: float | None
    points: list[Point]

    def to_dict(self) -> dict[str, Any]:
        return {"slope_per_ln_updates": self.slope, "slope_95ci": [self.low, self.high], "intercept": self.intercept,
                "points": [{"updates": p.updates, "n": p.n, "accuracy": p.accuracy,
                            "accuracy_95ci": list(p.ci), "key_outcomes": p.key_outcomes}
                           for p in self.points]}


def ols_slope(xs: list[float], ys: list[float]) -> tuple[float, float] | None:
    """(slope, intercept) of y on x, or None when x does not vary."""
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def bootstrap_slope(strata: Mapping[Any, list[tuple[float, float]]], *, resamples: int = RESAMPLES,
                    seed: int = 0) -> tuple[float, float] | None:
    """The 2.5% and 97.5% percentiles of the slope over stratified resamples."""
    rng = random.Random(seed)
    slopes: list[float] = []
    groups = [g for g in strata.values() if g]
    for _ in range(resamples):
        xs: list[float] = []
        ys: list[float] = []
        for g in groups:
            for _ in g:
                x, y = g[rng.randrange(len(g))]
                xs.append(x)
                ys.append(y)
        fit = ols_slope(xs, ys)
        if fit is not None:
            slopes.append(fit[0])
    if not slopes:
        return None
    slopes.sort()
    return slopes[int(0.025 * (len(slopes) - 1))], slopes[int(math.ceil(0.975 * (len(slopes) - 1)))]


def fit_records(records: Iterable[CaseRecord]) -> dict[str, Fit]:
    """Label → fit, for every label whose cases are ``updates`` cases (their meta names U)."""
    by_label: dict[str, list[CaseRecord]] = defaultdict(list)
    for rec in records:
        meta = rec.meta or {}
        if "updates_per_key" not in meta or meta.get("no_context") or rec.score is None \
                or rec.outcome in HARNESS_OUTCOMES:
            continue
        by_label[rec.family].append(rec)
    return {label: _fit(rows) for label, rows in sorted(by_label.items())}


def _fit(rows: list[CaseRecord]) -> Fit:
    strata: dict[tuple[int, int, int], list[tuple[float, float]]] = defaultdict(list)
    by_u: dict[int, list[CaseRecord]] = defaultdict(list)
    for rec in rows:
        u = int(rec.meta["updates_per_key"])
        k = int(rec.meta.get("n_keys") or 0)
        strata[(rec.length, k, u)].append((math.log(u), float(rec.score or 0.0)))
        by_u[u].append(rec)
    points = []
    for u, group in sorted(by_u.items()):
        counts: dict[str, int] = defaultdict(int)
        for rec in group:
            for item in (rec.detail or {}).get("keys", []):
                counts[str(item["outcome"])] += 1
        total = sum(float(r.score or 0.0) for r in group)
        points.append(Point(u, len(group), total / len(group), dict(sorted(counts.items())),
                            wilson_interval(total, len(group))))
    pairs = [xy for g in strata.values() for xy in g]
    fit = ols_slope([x for x, _ in pairs], [y for _, y in pairs])
    ci = bootstrap_slope(strata) if fit is not None else None
    return Fit(fit[0] if fit else None, ci[0] if ci else None, ci[1] if ci else None, fit[1] if fit else None, points)
