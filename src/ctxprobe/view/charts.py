"""The run page's pictures as plain geometry for server-side SVG: the length × depth
heatmap and the accuracy curve with its intervals and the bar. Every number is read from
a profile of ``report --json`` (:func:`ctxprobe.report.jsonreport.profile_to_dict`), never
recomputed; the templates draw them (escaped like any other value)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ctxprobe.report.format import fmt_interval, fmt_score
from ctxprobe.report.html.parts import accuracy_colours


@dataclass(frozen=True)
class HeatCell:
    length: int
    depth: float
    length_label: str
    depth_label: str
    text: str  # the accuracy as the report prints it, "–" unmeasured
    n: str
    tip: str  # accuracy, n and interval: the hover text
    bg: str
    fg: str
    mean: float | None
    #: The cell exactly as ``report --json`` gives it (JSON), for tools and tests reading the page.
    raw: str = "{}"


@dataclass(frozen=True)
class Heatmap:
    depths: list[tuple[float, str]]
    rows: list[tuple[int, str, list[HeatCell | None]]]  # per length: (length, label, a cell per depth)


def _tip(c: dict[str, Any], ci: str) -> str:
    n = c.get("n_label") or c["n"]
    if c["mean"] is None:
        return f"{c['length_label']} · depth {c['depth_label']}: not measured (n={n})"
    if "lo" not in c:  # an adaptive run: no fixed-n interval
        return f"{c['length_label']} · depth {c['depth_label']}: accuracy {fmt_score(c['mean'])}, n={n}"
    return (f"{c['length_label']} · depth {c['depth_label']}: accuracy {fmt_score(c['mean'])}, n={n}, "
            f"{ci} {fmt_interval(c['lo'], c['hi'])}")


def heatmap(profile: dict[str, Any]) -> Heatmap:
    """Lengths down, depths across, each cell from the profile's ``cells``."""
    ci = "95% CI clustered by case" if "interval" in profile else "Wilson 95% CI"
    cells = {(c["length"], c["depth"]): c for c in profile["cells"]}
    depths = sorted({(c["depth"], c["depth_label"]) for c in profile["cells"]})
    lengths = sorted({(c["length"], c["length_label"]) for c in profile["cells"]})
    rows = []
    for length, label in lengths:
        row: list[HeatCell | None] = []
        for depth, dlabel in depths:
            c = cells.get((length, depth))
            if c is None:
                row.append(None)
                continue
            bg, fg = accuracy_colours(c["mean"])
            row.append(HeatCell(length, depth, label, dlabel, fmt_score(c["mean"]), str(c.get("n_label") or c["n"]),
                                _tip(c, ci), bg, fg, c["mean"], json.dumps(c, sort_keys=True)))
        rows.append((length, label, row))
    return Heatmap(depths, rows)


@dataclass(frozen=True)
class CurvePoint:
    x: float
    y: float | None
    y_lo: float | None
    y_hi: float | None
    label: str
    tip: str


@dataclass(frozen=True)
class Curve:
    width: int
    height: int
    left: int
    top: int
    plot_w: int
    plot_h: int
    points: list[CurvePoint]
    bar_y: float
    bar: float
    path: str  # the polyline through the measured means
    yticks: list[tuple[float, str]]


def curve(profile: dict[str, Any], width: int = 560, height: int = 260) -> Curve:
    """Accuracy per length (pooled over depths) on a log-2 length axis, with each length's
    interval as a vertical bar and the family's bar as a dashed line."""
    left, top, right, bottom = 48, 14, 16, 40
    pw, ph = width - left - right, height - top - bottom
    stats = sorted(profile["lengths"], key=lambda s: s["length"])
    logs = [math.log2(s["length"]) for s in stats] or [0.0]
    lo_x, hi_x = min(logs), max(logs)
    span = hi_x - lo_x or 1.0

    def x_of(length: int) -> float:
        if len(stats) == 1:
            return left + pw / 2
        return left + (math.log2(length) - lo_x) / span * pw

    def y_of(v: float) -> float:
        return top + (1 - v) * ph

    points = []
    for s in stats:
        mean, lo, hi = s["mean"], s.get("lo"), s.get("hi")
        tip = (f"{s['length_label']}: accuracy {fmt_score(mean)}, n={s.get('n_label') or s['n']}"
               + (f", 95% interval {fmt_interval(lo, hi)}" if mean is not None and lo is not None else ""))
        points.append(CurvePoint(round(x_of(s["length"]), 1), None if mean is None else round(y_of(mean), 1),
                                 None if mean is None or lo is None else round(y_of(lo), 1),
                                 None if mean is None or hi is None else round(y_of(hi), 1), s["length_label"], tip))
    path = " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(q for q in points if q.y is not None))
    threshold = float(profile["threshold"])
    return Curve(width, height, left, top, pw, ph, points, round(y_of(threshold), 1), threshold, path,
                 [(round(y_of(v), 1), f"{v:g}") for v in (0.0, 0.25, 0.5, 0.75, 1.0)])


@dataclass(frozen=True)
class Trend:
    """Effective length per run over time, for the history page (log-2 axis, intervals)."""

    width: int
    height: int
    left: int
    top: int
    plot_w: int
    plot_h: int
    points: list[tuple[float, float, float, float, str]]  # x, y, y_lo, y_hi, tip
    path: str
    yticks: list[tuple[float, str]]
    xticks: list[tuple[float, str]]  # the first and the last run's date


def trend(values: list[tuple[int | None, int | None, int | None, str]], lengths: list[int],
          labels: dict[int, str], width: int = 640, height: int = 240, dates: list[str] | None = None) -> Trend:
    """``values``: per run in time order (point, lo, hi, tip); ``lengths``: the tested ones
    (the axis). ``None`` is below the shortest length (as in
    :class:`~ctxprobe.analysis.efflength.EffectiveLength`, whose ``hi`` never exceeds the
    longest): it sits on the bottom tick, "< shortest", an interval's upper end included."""
    left, top, right, bottom = 60, 14, 16, 30
    pw, ph = width - left - right, height - top - bottom
    axis = sorted(set(lengths)) or [1]
    lo_l, hi_l = math.log2(axis[0]) - 1, math.log2(axis[-1])
    span = hi_l - lo_l or 1.0

    def y_of(v: int | None) -> float:
        at = math.log2(v) if v else lo_l
        return round(top + (1 - (at - lo_l) / span) * ph, 1)

    n = len(values)
    pts = []
    for i, (point, lo, hi, tip) in enumerate(values):
        x = round(left + (pw / 2 if n == 1 else i / (n - 1) * pw), 1)
        pts.append((x, y_of(point), y_of(lo), y_of(hi), tip))
    path = " ".join(f"{'M' if i == 0 else 'L'}{x},{y}" for i, (x, y, _, _, _) in enumerate(pts))
    ticks = [(y_of(None), f"< {labels.get(axis[0], str(axis[0]))}")] + [(y_of(L), labels.get(L, str(L))) for L in axis]
    shown = sorted({0, len(pts) - 1}) if pts and dates else []
    return Trend(width, height, left, top, pw, ph, pts, path, ticks, [(pts[i][0], (dates or [])[i]) for i in shown])
