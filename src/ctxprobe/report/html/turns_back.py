"""The HTML report's turns-back section: per run built in a ``turns`` or ``tools`` layout
(docs/layouts.md), accuracy against how many messages back the evidence sat — the plot,
the table the terminal prints (``--details``) and how far back each family label still
clears its bar. Left out of a page whose runs have no such data (the default layout)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from ctxprobe.analysis.turns_back import turns_back_bins
from ctxprobe.report.html.parts import PageSection, Table, figure, page_section, plotted
from ctxprobe.report.html.sections import PageViews, RunView, slug
from ctxprobe.report.turns_back_table import CAPTION, HEADERS, turns_back_rows


def turns_back_runs(views: Sequence[RunView], png_dir: Any) -> list[dict[str, Any]]:
    """One entry per run with turns-back data."""
    from ctxprobe.report.plots.turns_back import turns_back_png

    out = []
    for view in views:
        report = view.report
        if not report.turns_back:
            continue
        png = png_dir / slug(report.run.run_id) / "turns-back-curve.png"
        path = plotted(partial(turns_back_png, report.turns_back, report.turns_back_reach, png, view.label))
        out.append({"label": view.label,
                    "figure": figure(path, f"accuracy by turns back, {view.label}",
                                     "accuracy against messages back (0: the last message), 95% band; "
                                     "dashed: the bar"),
                    "reach": [r.line() for r in report.turns_back_reach],
                    "table": Table(HEADERS, turns_back_rows(turns_back_bins(report.turns_back)), caption=CAPTION)})
    return out


def turns_back_section(views: PageViews) -> PageSection | None:
    found = turns_back_runs(list(views), views.png_dir)
    return page_section("turns_back.html.j2", [("turns-back", "Turns back")], runs=found) if found else None
