"""Per-family accuracy bars resolved to numbers.

A bar is absolute (a number, RULER's 0.856 by default) or relative (``relative:F``,
NoLiMa's rule by the name ``nolima``: F x the family's own pooled score at its shortest
scored length). A relative bar of a family that scores 0 there has nothing to degrade
from: it is infinite (no length clears it), as :class:`~ctxprobe.analysis.bootstrap.ThresholdRule`
gives no bar.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

from ctxprobe.analysis.grid import model_score
from ctxprobe.core.rows import ResultRow
from ctxprobe.spec.threshold import Bar, check_bar

__all__ = ["family_bar", "resolve_bars", "shortest_means"]


def shortest_means(rows: Iterable[ResultRow]) -> dict[str, float]:
    """Per family, the pooled mean score at its shortest length with a scored case."""
    sums: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in rows:
        if (score := model_score(r)) is not None:
            sums[(r.family, r.length)].append(float(score))
    out: dict[str, float] = {}
    for (family, _length), scores in sorted(sums.items(), key=lambda kv: kv[0][1]):
        out.setdefault(family, math.fsum(scores) / len(scores))
    return out


def family_bar(bar: Bar, base: float | None) -> float:
    """A bar as a number: itself, or F x ``base`` for a relative one (inf without a base)."""
    bar = check_bar(bar)
    if isinstance(bar, float):
        return bar
    fraction = float(bar.partition(":")[2])
    return fraction * base if base is not None and base > 0 else math.inf


def resolve_bars(rows: Iterable[ResultRow], default: float, bars: Mapping[str, Bar] | None = None,
                 families: Iterable[str] = ()) -> dict[str, float]:
    """Each family's bar as a number: ``bars[family]`` where given, else ``default``.

    A family label ``FAMILY@thinkB`` (one curve per reasoning budget) takes FAMILY's bar."""
    rows = list(rows)
    bars = dict(bars or {})
    base = shortest_means(rows)
    names = set(families) | {r.family for r in rows}
    out: dict[str, float] = {}
    for family in names:
        given = bars.get(family, bars.get(family.split("@", 1)[0]))
        out[family] = default if given is None else family_bar(given, base.get(family))
    return out
