"""Accuracy by how many turns back the evidence sat (message layouts, docs/layouts.md).

A case built in a ``turns`` or ``tools`` layout records ``meta.turns_back``: how many
messages before the last one its evidence sits. Grouped per family label and number of
turns back, the mean score says whether a model loses a fact the further back in the
conversation it was stated (:func:`turns_back_bins` pools the distances into doubling
ranges, :func:`turns_back_reach` says how far back the bar still holds). Cases without
the key (the default ``single`` layout, families that do not name their evidence) are left
out, so a run without such cases has no rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxprobe.core.baseline import is_baseline
from ctxprobe.store import CaseRecord


@dataclass(frozen=True)
class TurnsBackStat:
    family: str  # the label (a variant's ``niah~chat``)
    turns_back: int
    n: int
    mean: float

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "turns_back": self.turns_back, "n": self.n, "mean": round(self.mean, 6)}


def turns_back_stats(records: Iterable[CaseRecord]) -> list[TurnsBackStat]:
    """Mean score per (family label, turns back), scored cases only, sorted."""
    scores: dict[tuple[str, int], list[float]] = defaultdict(list)
    for rec in records:
        back = (rec.meta or {}).get("turns_back")
        if not isinstance(back, int) or isinstance(back, bool) or rec.score is None or is_baseline(rec.family):
            continue
        scores[(rec.family, back)].append(float(rec.score))
    return [TurnsBackStat(f, b, len(v), sum(v) / len(v)) for (f, b), v in sorted(scores.items())]


def bin_of(back: int) -> tuple[int, int]:
    """The bin a number of turns back falls in: 0, 1 and 2 alone, then doubling ranges
    (3–4, 5–8, 9–16, …), so a conversation of hundreds of turns reads in a few rows."""
    if back <= 2:
        return back, back
    hi = 1 << (back - 1).bit_length()
    return hi // 2 + 1, hi


@dataclass(frozen=True)
class TurnsBackBin:
    """Accuracy of one family label's cases whose evidence sat ``lo``–``hi`` messages back."""

    family: str
    lo: int
    hi: int
    n: int
    mean: float
    ci_lo: float
    ci_hi: float

    @property
    def label(self) -> str:
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


def turns_back_bins(stats: Iterable[TurnsBackStat]) -> list[TurnsBackBin]:
    """The stats pooled into :func:`bin_of`'s bins per family label, each with its Wilson
    95% interval (scores summed as successes, as every profile cell's)."""
    from ctxprobe.analysis.stats import wilson_interval

    pooled: dict[tuple[str, int, int], list[float]] = defaultdict(lambda: [0, 0.0])
    for s in stats:
        lo, hi = bin_of(s.turns_back)
        cell = pooled[(s.family, lo, hi)]
        cell[0] += s.n
        cell[1] += s.mean * s.n
    out = []
    for (family, lo, hi), (n, total) in sorted(pooled.items()):
        ci = wilson_interval(total, int(n))
        out.append(TurnsBackBin(family, lo, hi, int(n), total / n, *ci))
    return out


@dataclass(frozen=True)
class TurnsBackReach:
    """How far back a family label's evidence may sit with every case at that distance still
    at the bar: ``reach`` is the largest measured number of turns back up to which each
    measured distance's accuracy clears ``bar`` (None: already the nearest misses it);
    ``first_below`` the nearest distance that does not (None: none, up to ``furthest``)."""

    family: str
    bar: float
    reach: int | None
    first_below: int | None
    furthest: int

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "bar": self.bar, "reach": self.reach, "first_below": self.first_below,
                "furthest": self.furthest}

    def line(self) -> str:
        if self.first_below is None:
            return f"{self.family} clears the bar {self.bar:g} at every distance measured, up to {_back(self.furthest)}"
        if self.reach is None:
            return f"{self.family} is below the bar {self.bar:g} already {_back(self.first_below)}"
        return (f"{self.family} clears the bar {self.bar:g} up to {_back(self.reach)}; below it "
                f"{self.first_below} back (furthest measured {self.furthest})")


def _back(n: int) -> str:
    return f"{n} message{'' if n == 1 else 's'} back"


def turns_back_reach(stats: Iterable[TurnsBackStat], bars: dict[str, float]) -> list[TurnsBackReach]:
    """Per family label with a bar (its profile's threshold): walking out from the last
    message, the furthest distance before the first whose accuracy falls below the bar."""
    from ctxprobe.analysis.grid import clears

    by_family: dict[str, list[TurnsBackStat]] = defaultdict(list)
    for s in stats:
        by_family[s.family].append(s)
    out = []
    for family, rows in sorted(by_family.items()):
        if family not in bars:
            continue
        bar = bars[family]
        reach = first = None
        for s in sorted(rows, key=lambda r: r.turns_back):
            if not clears(s.mean, bar):
                first = s.turns_back
                break
            reach = s.turns_back
        out.append(TurnsBackReach(family, bar, reach, first, max(r.turns_back for r in rows)))
    return out
