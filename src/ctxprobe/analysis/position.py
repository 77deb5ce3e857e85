"""Position bias stated: is the middle of the context weaker than its edges, and does the
sag grow with length?

Per family and length, over the scored cases (harness failures left out), each case
counted once: a case sent k times (a decoding variant's ``samples=k``) is one case at the
mean of its measured samples (:func:`ctxprobe.analysis.sampled.case_means`), since its k
samples read one prompt and are no k independent cases. A case mean is in [0, 1], so its
variance is at most p(1 − p) and the Wilson interval over cases keeps its coverage.

- the **edges** are the shallowest and the deepest depth of the run (0 and 1 by default),
  the **middle** every depth within [0.25, 0.75] (0.25, 0.5 and 0.75 by default); a depth
  in neither (0.1, 0.9) is in no group. A length needs both groups measured.
- the **deficit** is edge accuracy − middle accuracy (positive: the middle is weaker).
- its **95% interval** is Newcombe's square-and-add interval for a paired difference
  (Newcombe 1998, method 10): each group's Wilson interval over its cases, combined with
  the correlation φ of the per-repetition edge and middle means (cases of one repetition
  share filler and keys at every depth, so they are pairs); φ is 0 when either mean is the
  same in every repetition. The interval keeps its coverage at few cases, where a bootstrap
  of a handful of repetitions is far too narrow (all ten agreeing gives [1, 1]).
- the middle **is weaker** at a length when the interval's lower bound is above 0; it is
  stronger when the upper bound is below 0; otherwise no difference is shown.

**Does the sag grow with length?** The per-repetition deficits ``d(L, r)`` (edge mean −
middle mean of repetition r at length L) are regressed on log2(L); the slope is the change
of the deficit per doubling of the length. Its one-sided p-value is a permutation test:
the deficits are shuffled across lengths (under "the sag does not depend on length" every
assignment is as likely) ``PERMUTATIONS`` times with a fixed seed, p = (1 + #{slope* ≥
slope}) / (1 + PERMUTATIONS). The sag **grows** when p < ``ALPHA`` and the slope is
positive. Needs two lengths or more with a deficit.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ctxprobe.analysis.sampled import case_means
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.rows import ResultRow

#: Depths in this closed range are the middle.
MIDDLE = (0.25, 0.75)
PERMUTATIONS = 4000
ALPHA = 0.05
_SEED = 20240611


@dataclass(frozen=True)
class LengthDeficit:
    length: int
    edge: float  # accuracy at the edge depths
    middle: float  # accuracy at the middle depths
    deficit: float  # edge − middle
    lo: float
    hi: float
    n_edge: int
    n_middle: int
    reps: int  # repetitions with both groups measured (the pairs behind φ)
    phi: float

    @property
    def verdict(self) -> str:
        """``weaker`` / ``stronger`` (the middle, the interval excluding 0) or ``no difference``."""
        if self.lo > 0:
            return "weaker"
        if self.hi < 0:
            return "stronger"
        return "no difference"


@dataclass(frozen=True)
class Growth:
    slope: float  # deficit change per doubling of the length
    p_value: float  # one-sided: the sag grows
    permutations: int

    @property
    def grows(self) -> bool:
        return self.slope > 0 and self.p_value < ALPHA


@dataclass(frozen=True)
class PositionBias:
    family: str
    edges: tuple[float, ...]
    middle: tuple[float, ...]
    lengths: list[LengthDeficit]
    growth: Growth | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family, "edge_depths": list(self.edges), "middle_depths": list(self.middle),
            "deficit": "edge accuracy - middle accuracy (positive: the middle is weaker)",
            "interval": "Newcombe paired square-and-add (method 10), Wilson per group over cases (a sampled case "
                        "once, at its samples' mean), phi over repetitions, 95%",
            "lengths": [asdict(d) | {"verdict": d.verdict} for d in self.lengths],
            "growth": None if self.growth is None else asdict(self.growth) | {
                "grows": self.growth.grows, "alpha": ALPHA,
                "test": "slope of per-repetition deficit on log2(length); one-sided permutation p"},
        }


def position_bias(rows: Iterable[ResultRow]) -> list[PositionBias]:
    """One :class:`PositionBias` per family whose depths have both edges and a middle."""
    by_family: dict[str, list[ResultRow]] = defaultdict(list)
    for r in case_means(rows):
        if r.score is not None:
            by_family[r.family].append(r)
    out = []
    for family in sorted(by_family):
        found = _family_bias(family, by_family[family])
        if found is not None:
            out.append(found)
    return out


def _family_bias(family: str, rows: list[ResultRow]) -> PositionBias | None:
    depths = sorted({r.depth for r in rows})
    if len(depths) < 3:
        return None
    edges = (depths[0], depths[-1])
    middle = tuple(d for d in depths if MIDDLE[0] <= d <= MIDDLE[1] and d not in edges)
    if not middle:
        return None
    cells: dict[tuple[int, int], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for r in rows:
        score = float(r.score or 0.0)
        if r.depth in edges:
            cells[(r.length, r.rep)][0].append(score)
        elif r.depth in middle:
            cells[(r.length, r.rep)][1].append(score)
    lengths: list[LengthDeficit] = []
    pairs: list[tuple[float, float]] = []  # (log2 length, per-repetition deficit)
    for length in sorted({r.length for r in rows}):
        edge = [s for (L, _), (e, _m) in cells.items() if L == length for s in e]
        mid = [s for (L, _), (_e, m) in cells.items() if L == length for s in m]
        if not edge or not mid:
            continue
        reps = [(sum(e) / len(e), sum(m) / len(m)) for (L, _), (e, m) in sorted(cells.items())
                if L == length and e and m]
        found = paired_deficit(sum(edge), len(edge), sum(mid), len(mid), reps)
        lengths.append(LengthDeficit(length, *found[:5], len(edge), len(mid), len(reps), found[5]))
        pairs += [(math.log2(length), e - m) for e, m in reps]
    return PositionBias(family, edges, middle, lengths, growth_test(pairs))


def paired_deficit(edge_sum: float, n_edge: int, mid_sum: float, n_mid: int,
                   reps: list[tuple[float, float]]) -> tuple[float, float, float, float, float, float]:
    """(edge, middle, deficit, lo, hi, phi): Newcombe's paired square-and-add interval of
    edge − middle (module docstring)."""
    p1, p2 = edge_sum / n_edge, mid_sum / n_mid
    l1, u1 = wilson_interval(edge_sum, n_edge)
    l2, u2 = wilson_interval(mid_sum, n_mid)
    phi = _correlation(reps)
    d = p1 - p2
    lo = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    hi = d + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return p1, p2, d, max(-1.0, lo), min(1.0, hi), phi


def _correlation(pairs: list[tuple[float, float]]) -> float:
    if len(pairs) < 2:
        return 0.0
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return 0.0
    return max(-1.0, min(1.0, sum((x - mx) * (y - my) for x, y in pairs) / math.sqrt(sxx * syy)))


def growth_test(pairs: list[tuple[float, float]], permutations: int = PERMUTATIONS,
                seed: int = _SEED) -> Growth | None:
    """Slope of the deficit on log2(length) and its one-sided permutation p (module
    docstring); None with fewer than two lengths."""
    if len({x for x, _ in pairs}) < 2:
        return None
    mx = sum(x for x, _ in pairs) / len(pairs)
    cx = [x - mx for x, _ in pairs]
    sxx = sum(c * c for c in cx)
    ys = [y for _, y in pairs]

    def stat() -> float:  # the OLS slope times sxx (sum of cx * mean(y) is 0)
        return sum(c * y for c, y in zip(cx, ys))

    observed = stat()
    rng = random.Random(seed)
    at_least = 0
    for _ in range(permutations):
        rng.shuffle(ys)
        if stat() >= observed - 1e-9:
            at_least += 1
    return Growth(observed / sxx, (1 + at_least) / (1 + permutations), permutations)
