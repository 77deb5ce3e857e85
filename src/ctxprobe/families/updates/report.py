"""What ``updates`` adds to the reports: PI-LLM's curve (accuracy against ln U with the
fitted slope and its interval) and the per-key outcome counts (``stale`` among them), in
the JSON report under the family's label, as a section of the HTML page, and drawn
(:meth:`UpdatesHooks.plot_data`: accuracy against U on a log axis with each point's 95%
interval, the fitted line, the slope in the title) as ``<label>-by-updates-per-key.png``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import math
from typing import TYPE_CHECKING, Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.html.label_tables import LabelTableHooks
from ctxprobe.report.html.parts import Table

if TYPE_CHECKING:
    from ctxprobe.report.plots.points import PointsPlot


def _num(x: float | None, fmt: str = "+.3f") -> str:
    return "–" if x is None else format(x, fmt)


def equation(fit: Mapping[str, Any]) -> str:
    lo, hi = fit["slope_95ci"]
    return (f"accuracy = {_num(fit['intercept'], '.3f')} {_num(fit['slope_per_ln_updates'])} × ln U "
            f"(95% CI of the slope {_num(lo)} to {_num(hi)})")


class UpdatesHooks(LabelTableHooks):
    title = "Update interference (PI-LLM)"
    note = ("Accuracy against ln(updates per key), fitted by least squares; 'stale' counts keys answered with a "
            "value they held before being overwritten.")
    anchor = "updates-interference"
    points_title = "by updates per key U"
    png_name = "by-updates-per-key"

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        from ctxprobe.families.updates.analysis import fit_records

        return {label: fit.to_dict() for label, fit in fit_records(records).items()}

    def label_headline(self, data: Mapping[str, Any]) -> str:
        return f"PI-LLM's curve, {equation(data)}"

    def point_text(self, p: Mapping[str, Any]) -> str:
        return (f"{p['updates']}: {p['accuracy']:.2f} ({p['n']} cases; {p['key_outcomes'].get('stale', 0)} of "
                f"{sum(p['key_outcomes'].values())} keys stale)")

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        rows = [[str(p["updates"]), str(p["n"]), f"{p['accuracy']:.3f}",
                 ", ".join(f"{k} {v}" for k, v in p["key_outcomes"].items())] for p in data["points"]]
        return Table(["updates per key", "cases", "accuracy", "key outcomes"], rows,
                     caption=f"{run} · {label}: {equation(data)}")

    def plot_data(self, title: str, label: str, data: Mapping[str, Any]) -> PointsPlot:
        from ctxprobe.report.plots.points import Line, PointsPlot, Series

        pts = data["points"]
        us = [float(p["updates"]) for p in pts]
        series = Series("mean accuracy (95% CI, Wilson over cases)", us, [p["accuracy"] for p in pts],
                        [p["accuracy_95ci"][0] for p in pts], [p["accuracy_95ci"][1] for p in pts])
        slope, a = data["slope_per_ln_updates"], data["intercept"]
        fit = None
        if slope is not None and a is not None:
            grid = [us[0] * (us[-1] / us[0]) ** (i / 48) for i in range(49)]
            fit = Line(f"fit: accuracy = {a:.3f} {slope:+.3f} × ln U", grid, [a + slope * math.log(u) for u in grid])
        lo, hi = data["slope_95ci"]
        slope_text = ("slope not fitted (one U)" if slope is None else
                      f"slope {slope:+.3f} per ln U (95% CI {_num(lo)} to {_num(hi)})")
        stale = sum(p["key_outcomes"].get("stale", 0) for p in pts)
        keys = sum(sum(p["key_outcomes"].values()) for p in pts)
        return PointsPlot(f"{title} · {label}: PI-LLM's curve, {slope_text}", "updates per key U (log scale)",
                          "accuracy (share of final values)", [series], log_base=2, fit=fit,
                          mark_label=f"stale: {stale} of {keys} keys answered with an overwritten value",
                          xticks=[(u, f"{u:g}") for u in us])

    def caption(self, run: str, label: str, data: Mapping[str, Any]) -> str:
        return f"{run} · {label}: accuracy against updates per key (log axis), {equation(data)}"


HOOKS = UpdatesHooks()
