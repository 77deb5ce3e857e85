"""The HTML report's reasoning-budget section: per run with a budget axis, the table the
terminal prints (accuracy, effective length, answers cut off while thinking, reasoning
tokens billed, per family and budget)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxprobe.report.budget_table import HEADERS, budget_rows
from ctxprobe.report.html.parts import Table
from ctxprobe.report.html.sections import RunView


def budget_runs(views: Sequence[RunView]) -> list[dict[str, Any]]:
    """One entry per run with reasoning budgets (the section is left out when there is none)."""
    out = []
    for view in views:
        stats = view.report.budgets
        if stats:
            out.append({"label": view.label, "table": Table(
                HEADERS, budget_rows(stats),
                caption="each budget's curve is the profile FAMILY@thinkBUDGET; cut off thinking = the output cap "
                        "was reached before any answer (output_truncated), left out of accuracy, never scored as wrong")})
    return out
