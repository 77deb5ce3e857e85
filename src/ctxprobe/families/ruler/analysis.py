"""RULER's headline for a run of its tasks: task scores per length, their average, and
the effective length under RULER's rule.

RULER reports each task at each length as ``round(mean per-case score × 100, 2)``
(``string_match_all`` / ``string_match_part``), averages the tasks per length, and calls a
length effective while that average is at least 85.6 (Llama-2-7B's average at 4K). The
walk is ctxprobe's usual one (ascending lengths, stop at the first that fails), so a pass
at a long length cannot hide a failure below it.

Rows must already carry RULER's per-case scores (``load_report(scorer="ruler")``);
harness failures (score None) are left out, as everywhere in ctxprobe.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.core.rows import ResultRow
from ctxprobe.families.ruler.task.constants import RULER_BAR
from ctxprobe.families.ruler.task.metrics import task_score


@dataclass(frozen=True)
class RulerHeadline:
    tasks: list[str]  # RULER tasks with results, in RULER's order
    lengths: list[int]
    scores: dict[str, dict[int, float]]  # task -> length -> RULER score (0..100)
    average: dict[int, float]  # length -> mean of the task scores measured at that length (unrounded)
    effective_length: int | None
    missing: list[str] = field(default_factory=list)  # RULER tasks without results
    bar: float = RULER_BAR

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": f"average over tasks >= {self.bar}; ascending lengths, stop at the first that fails",
            "bar": self.bar, "tasks": self.tasks, "missing_tasks": self.missing,
            "scores": {t: {str(L): s for L, s in by.items()} for t, by in self.scores.items()},
            "average": {str(L): round(a, 2) for L, a in self.average.items()},
            "effective_length": self.effective_length,
        }


def ruler_headline(rows: Sequence[ResultRow], task_order: Sequence[str],
                   bar: float = RULER_BAR) -> RulerHeadline | None:
    """The headline over the rows whose family label is one of ``task_order`` (RULER's task
    names); None when there is none."""
    per: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in rows:
        if r.family in task_order and r.score is not None:
            per[(r.family, r.length)].append(r.score)
    if not per:
        return None
    tasks = [t for t in task_order if any(k[0] == t for k in per)]
    lengths = sorted({k[1] for k in per})
    scores = {t: {L: task_score(per[(t, L)]) for L in lengths if (t, L) in per} for t in tasks}
    average: dict[int, float] = {}
    for L in lengths:
        vals = [scores[t][L] for t in tasks if L in scores[t]]
        average[L] = sum(vals) / len(vals)  # compared unrounded: 85.595 does not pass
    effective = None
    for L in lengths:
        if average[L] < bar:
            break
        effective = L
    missing = [t for t in task_order if t not in tasks]
    return RulerHeadline(tasks, lengths, scores, average, effective, missing, bar)
