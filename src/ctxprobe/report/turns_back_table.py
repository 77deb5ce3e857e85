"""Accuracy by turns back as a table: per family label and range of messages back (a
conversation's evidence in a ``turns`` or ``tools`` layout, docs/layouts.md), the same
rows in the terminal (``--details``) and the HTML report."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from ctxprobe.analysis.turns_back import TurnsBackBin, TurnsBackStat, turns_back_bins
from ctxprobe.report.format import fmt_interval, fmt_score

HEADERS = ["family", "messages back", "accuracy", "95% CI", "n"]
CAPTION = ("messages back: how many messages after the one holding the evidence (0: the last, as in one "
           "message); distances pooled 0, 1, 2, then doubling ranges; accuracy against it: "
           "turns-back-curve.png")


def turns_back_rows(bins: list[TurnsBackBin]) -> list[list[str]]:
    """One row of text cells per (family label, range)."""
    return [[b.family, b.label, fmt_score(b.mean), fmt_interval(b.ci_lo, b.ci_hi).strip("[]"), str(b.n)]
            for b in bins]


def render_turns_back_table(stats: list[TurnsBackStat], console: Console) -> None:
    """Print the table (nothing for a run without turns-back data: the default layout)."""
    if not stats:
        return
    table = Table(title="accuracy by turns back", box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    for i, header in enumerate(HEADERS):
        table.add_column(header, justify="left" if i == 0 else "right", overflow="fold")
    for row in turns_back_rows(turns_back_bins(stats)):
        table.add_row(*row)
    console.print(table)
    console.print(CAPTION, highlight=False, style="dim")
