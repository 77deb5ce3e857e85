"""Accuracy by how many turns back the evidence sat (message layouts, docs/layouts.md).

A case built in a ``turns`` or ``tools`` layout records ``meta.turns_back``: how many
messages before the last one its evidence sits. Grouped per family label and number of
turns back, the mean score says whether a model loses a fact the further back in the
conversation it was stated. Cases without the key (the default ``single`` layout, families
that do not name their evidence) are left out, so a run without such cases has no rows.
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
