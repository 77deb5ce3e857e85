"""Instruction following under load, from a run of ``instructions``: IFEval's four numbers
(instruction-level and prompt-level accuracy, strict and loose) per instruction count I,
and the *instruction capacity*: the largest I up to which prompt-level strict accuracy
clears the bar at every tested I (walked in ascending I, stopping at the first that
fails; ``None`` when the smallest fails). Prompt-level strict points carry a Wilson 95%
interval; instruction-level strict points a 95% interval for instructions clustered in
their prompts (:func:`ctxprobe.analysis.clustered.clustered_interval`: a prompt read badly
fails several at once, so they are not independent trials). Harness failures (no score) and noise-floor twins are left out. The bar is the
default one here; a report walks the points again at its own (:func:`at_bars`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxprobe.analysis.clustered import clustered_interval
from ctxprobe.analysis.grid import DEFAULT_THRESHOLD, walk_levels
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.outcome import HARNESS_OUTCOMES
from ctxprobe.core.records import CaseRecord


@dataclass(frozen=True)
class CountPoint:
    count: int
    n: int
    inst_strict: float
    inst_loose: float
    prompt_strict: float
    prompt_loose: float
    prompt_strict_ci: tuple[float, float]
    inst_strict_ci: tuple[float, float] = (0.0, 1.0)


def by_count(records: Iterable[CaseRecord]) -> dict[str, list[CountPoint]]:
    """Label → one point per instruction count, ascending."""
    groups: dict[str, dict[int, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        meta, detail = rec.meta or {}, rec.detail or {}
        if "instruction_id_list" not in meta or meta.get("no_context") or rec.score is None \
                or rec.outcome in HARNESS_OUTCOMES or "strict" not in detail:
            continue
        groups[rec.family][int(meta["n_instructions"])].append(detail)
    out: dict[str, list[CountPoint]] = {}
    for label, counts in sorted(groups.items()):
        points = []
        for count, details in sorted(counts.items()):
            strict = [v for d in details for v in d["strict"]]
            loose = [v for d in details for v in d["loose"]]
            ps = sum(bool(d["prompt_strict"]) for d in details)
            points.append(CountPoint(count, len(details), sum(strict) / len(strict), sum(loose) / len(loose),
                                     ps / len(details), sum(bool(d["prompt_loose"]) for d in details) / len(details),
                                     wilson_interval(ps, len(details)),
                                     clustered_interval([sum(d["strict"]) for d in details],
                                                        [len(d["strict"]) for d in details])[1:]))
        out[label] = points
    return out


def capacity(points: list[CountPoint], threshold: float = DEFAULT_THRESHOLD) -> int | None:
    """The largest instruction count before the first whose prompt-level strict accuracy misses the bar."""
    return walk_levels(((p.count, p.prompt_strict) for p in points), threshold)


def at_bars(extra: Mapping[str, Any], bars: Mapping[str, float]) -> dict[str, Any]:
    """:func:`to_dict`'s objects (label → object) walked again at each label's bar."""
    out = {}
    for label, d in extra.items():
        bar = float(bars.get(label, d["threshold"]))
        cap = walk_levels(((p["instructions"], p["prompt_level_strict_acc"]) for p in d["points"]), bar)
        out[label] = {**d, "threshold": bar, "instruction_capacity": cap}
    return out


def to_dict(points: list[CountPoint], threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    return {"threshold": threshold, "instruction_capacity": capacity(points, threshold),
            "points": [{"instructions": p.count, "n": p.n, "inst_level_strict_acc": p.inst_strict,
                        "inst_level_loose_acc": p.inst_loose, "prompt_level_strict_acc": p.prompt_strict,
                        "prompt_level_loose_acc": p.prompt_loose, "prompt_level_strict_95ci": list(p.prompt_strict_ci),
                        "inst_level_strict_95ci": list(p.inst_strict_ci)}
                       for p in points]}
