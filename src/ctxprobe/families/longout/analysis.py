"""The *output* effective length from a run of ``longout``: per answer length (the asked
``answer_tokens`` level; each point also gives the reference answers' mean real length),
the mean F1 of the scored cases with its 95% interval (Wilson's over the scored cases, the
summed F1 as successes: ctxprobe's rule for partial credit, on the wide side; None with no
scored case) and how many replies the output limit cut
(``output_truncated``, not scored). The output effective length is the longest answer
level before the first, in ascending order, whose mean F1 misses the bar or that has no
scored case (every reply cut: the limit, not the model, is what was measured there);
None when the shortest level already stops the walk. Noise-floor twins are left out. The
bar is the default one here; a report walks the points again at its own (:func:`at_bars`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxprobe.analysis.grid import DEFAULT_THRESHOLD, walk_levels
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.outcome import HARNESS_OUTCOMES, Outcome
from ctxprobe.core.records import CaseRecord


@dataclass(frozen=True)
class AnswerPoint:
    level: int
    answer_tokens: float  # mean reference length, in the run's tokens (fences included)
    n: int  # scored cases
    cut: int  # replies cut at the output limit
    f1: float | None
    order: float | None
    ci: tuple[float, float] | None = None  # 95% of the F1, Wilson over the scored cases


def by_level(records: Iterable[CaseRecord]) -> dict[str, list[AnswerPoint]]:
    groups: dict[str, dict[int, list[CaseRecord]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        meta = rec.meta or {}
        if "reference_tsv" not in meta or meta.get("no_context") or rec.outcome in HARNESS_OUTCOMES \
                or rec.outcome is None:
            continue
        groups[rec.family][int(meta["answer_level"])].append(rec)
    out: dict[str, list[AnswerPoint]] = {}
    for label, levels in sorted(groups.items()):
        points = []
        for level, recs in sorted(levels.items()):
            scored = [r for r in recs if r.score is not None]
            cut = sum(r.outcome == Outcome.OUTPUT_TRUNCATED for r in recs)
            f1 = sum(float(r.score or 0.0) for r in scored) / len(scored) if scored else None
            order = (sum(float((r.detail or {}).get("order", 0.0)) for r in scored) / len(scored)
                     if scored else None)
            tokens = sum(float(r.meta["answer_tokens"]) for r in recs) / len(recs)
            ci = wilson_interval(sum(float(r.score or 0.0) for r in scored), len(scored)) if scored else None
            points.append(AnswerPoint(level, tokens, len(scored), cut, f1, order, ci))
        out[label] = points
    return out


def output_effective_length(points: list[AnswerPoint], threshold: float = DEFAULT_THRESHOLD) -> int | None:
    return walk_levels(((p.level, p.f1) for p in points), threshold)


def at_bars(extra: Mapping[str, Any], bars: Mapping[str, float]) -> dict[str, Any]:
    """:func:`to_dict`'s objects (label → object) walked again at each label's bar."""
    out = {}
    for label, d in extra.items():
        bar = float(bars.get(label, d["threshold"]))
        eff = walk_levels(((p["answer_level"], p["f1"]) for p in d["points"]), bar)
        out[label] = {**d, "threshold": bar, "output_effective_length": eff}
    return out


def to_dict(points: list[AnswerPoint], threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    return {"threshold": threshold, "output_effective_length": output_effective_length(points, threshold),
            "points": [{"answer_level": p.level, "answer_tokens": round(p.answer_tokens, 1), "n": p.n,
                        "output_truncated": p.cut, "f1": p.f1,
                        "f1_95ci": list(p.ci) if p.ci is not None else None, "order": p.order} for p in points]}
