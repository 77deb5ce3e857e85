"""The history page: runs that share a spec identity apart from the model (a CI
regression slice: the same families, lengths, depths, seed… over models and versions),
each family's effective length over time with its interval, as the runs' reports give it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.report.format import fmt_tokens
from ctxprobe.report.redact import redact
from ctxprobe.store import RunRecord
from ctxprobe.view.charts import Trend, trend
from ctxprobe.view.source import StoreSource

#: Spec keys that are the model (or follow from it), left out of a slice's identity.
MODEL_KEYS = ("model", "tokenizer", "name")


def slice_key(run: RunRecord) -> str:
    """The spec's identity without the model, as a short hash."""
    rest = {k: v for k, v in run.spec.items() if k not in MODEL_KEYS}
    return hashlib.sha256(json.dumps(rest, sort_keys=True, default=str).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Point:
    run_id: str
    model: str
    created: str
    line: str
    point: int | None
    lo: int | None
    hi: int | None


@dataclass(frozen=True)
class FamilyTrend:
    family: str
    points: list[Point]
    chart: Trend


@dataclass(frozen=True)
class Slice:
    key: str
    about: str
    runs: list[RunRecord]
    families: list[FamilyTrend] = field(default_factory=list)


def _about(run: RunRecord) -> str:
    s = run.spec
    lengths = ", ".join(fmt_tokens(x) for x in s.get("lengths") or [] if isinstance(x, int))
    return (f"families {', '.join(s.get('families') or {})} · lengths {lengths} · depths {s.get('depths')} · "
            f"reps {s.get('reps')} · seed {s.get('seed')}")


def slices(source: StoreSource, min_runs: int = 1) -> list[Slice]:
    """Every slice of the store with at least ``min_runs`` runs, the biggest first; runs
    in time order."""
    groups: dict[str, list[RunRecord]] = {}
    for run in source.runs():
        groups.setdefault(slice_key(run), []).append(run)
    out = []
    for key, runs in groups.items():
        if len(runs) < min_runs:
            continue
        runs = sorted(runs, key=lambda r: (r.created_at, r.run_id))
        per: dict[str, list[Point]] = {}
        lengths: dict[str, list[int]] = {}
        for run in runs:
            rep = source.loaded(run).report
            for p in rep.profiles:
                iv = rep.intervals.get(p.family)
                if iv is None:
                    continue
                per.setdefault(p.family, []).append(Point(run.run_id, redact(run.model), run.created_at[:16]
                                                          .replace("T", " "), iv.line(), iv.point, iv.lo, iv.hi))
                lengths.setdefault(p.family, []).extend(s.length for s in p.lengths)
        fams = []
        for fam, pts in per.items():
            axis = sorted(set(lengths[fam]))
            chart = trend([(p.point, p.lo, p.hi, f"{p.created} · {p.model} · {p.run_id}: {p.line}") for p in pts],
                          axis, {L: fmt_tokens(L) for L in axis}, dates=[p.created for p in pts])
            fams.append(FamilyTrend(fam, pts, chart))
        out.append(Slice(key, _about(runs[0]), runs, fams))
    return sorted(out, key=lambda s: (-len(s.runs), s.key))


def history_json(found: list[Slice]) -> list[dict[str, Any]]:
    return [{"slice": s.key, "about": s.about, "runs": [r.run_id for r in s.runs],
             "families": {f.family: [{"run_id": p.run_id, "model": p.model, "created": p.created, "point": p.point,
                                      "lo": p.lo, "hi": p.hi, "line": p.line} for p in f.points]
                          for f in s.families}} for s in found]
