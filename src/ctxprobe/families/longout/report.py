"""What ``longout`` adds to the reports: F1 per answer length and the *output* effective
length (beside the input one of the generic report), in the JSON report under the
family's label, as a section of the HTML page, and drawn (:meth:`LongoutHooks.plot_data`:
F1 against answer length with each point's 95% interval, the bar, the output effective
length marked) as ``<label>-by-answer-length.png``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.html.label_tables import LabelTableHooks
from ctxprobe.report.html.parts import Table

if TYPE_CHECKING:
    from ctxprobe.report.plots.points import PointsPlot


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def headline(d: Mapping[str, Any]) -> str:
    eff = d["output_effective_length"]
    return (f"output effective length {eff if eff is not None else 'below the shortest answer'} tokens "
            f"(mean F1 ≥ {d['threshold']})")


class LongoutHooks(LabelTableHooks):
    title = "Long outputs (LongProc HTML→TSV)"
    note = "Row-level F1 (LongProc's rule) by answer length; replies cut at the output limit are not scored."
    anchor = "longout-output"
    png_name = "by-answer-length"
    points_title = "by answer length"

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        from ctxprobe.families.longout.analysis import by_level, to_dict

        return {label: to_dict(points) for label, points in by_level(records).items()}

    def at_bars(self, extra: Any, bars: Mapping[str, float]) -> Any:
        from ctxprobe.families.longout.analysis import at_bars

        return at_bars(extra, bars)

    def label_headline(self, data: Mapping[str, Any]) -> str:
        return headline(data)

    def point_text(self, p: Mapping[str, Any]) -> str:
        return (f"{p['answer_level']}: F1 {_f(p['f1'])} ({p['n']} scored"
                + (f", {p['output_truncated']} cut at the output limit)" if p["output_truncated"] else ")"))

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        rows = [[str(p["answer_level"]), f"{p['answer_tokens']:.0f}", str(p["n"]), str(p["output_truncated"]),
                 _f(p["f1"]), _f(p["order"])] for p in data["points"]]
        return Table(["answer level", "answer tokens", "scored", "cut at limit", "F1", "order"], rows,
                     caption=f"{run} · {label}: {headline(data)}")

    def plot_data(self, title: str, label: str, data: Mapping[str, Any]) -> PointsPlot:
        from ctxprobe.report.plots.points import PointsPlot, Series

        pts = data["points"]
        xs = [float(p["answer_level"]) for p in pts]
        cis = [p["f1_95ci"] or [None, None] for p in pts]
        series = Series("mean row-level F1 (95% CI, Wilson over scored cases)", xs, [p["f1"] for p in pts],
                        [c[0] for c in cis], [c[1] for c in cis], gap_note="every reply\ncut at the\noutput limit")
        eff = data["output_effective_length"]
        mark = (f"output effective length {eff} tokens" if eff is not None
                else "output effective length: below the shortest answer")
        return PointsPlot(f"{title} · {label}: {headline(data)}", "answer length (tokens asked, log scale)",
                          "mean F1 (scored replies)", [series], log_base=2, bar=float(data["threshold"]),
                          mark_x=None if eff is None else float(eff), mark_label=mark,
                          xticks=[(x, f"{x:g}") for x in xs])

    def caption(self, run: str, label: str, data: Mapping[str, Any]) -> str:
        return f"{run} · {label}: F1 against answer length (log axis), {headline(data)}"


HOOKS = LongoutHooks()
