"""A report section: how many boxes cases each run scored correct, per length."""

from __future__ import annotations

from typing import Any

from ctxprobe.plugin import ReportSection, Table


def box_counts(views: list[Any]) -> ReportSection | None:
    rows = [[view.label, str(s.length), f"{s.outcomes.get('correct', 0)} of {s.n}"]
            for view in views for prof in view.report.profiles if prof.family == "boxes" for s in prof.lengths]
    if not rows:
        return None
    return ReportSection("Boxes read", [Table(["run", "length", "correct"], rows)], text="From the demo plugin.")
