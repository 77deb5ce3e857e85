"""The noise floor in the terminal: per length, the accuracy beside its guess rate."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ctxprobe.analysis.floor import KIND_WORDS, Floor
from ctxprobe.report.format import fmt_interval, fmt_score, fmt_tokens


def verdict(above: bool | None, confidence: float) -> str:
    return "–" if above is None else f"yes ({confidence * 100:g}%)" if above else "not shown"


def render_floor(floor: Floor, console: Console) -> None:
    """A table (length, accuracy, floor with its Wilson 95% interval, above it?) and the verdict line."""
    table = Table("length", "accuracy", "floor [Wilson 95% CI]", "above floor", header_style="bold",
                  title=f"{floor.family}: noise floor ({KIND_WORDS.get(floor.kind, floor.kind)})",
                  title_justify="left")
    for x in floor.lengths:
        shown = fmt_score(x.floor_mean) + (f" {fmt_interval(x.floor_lo, x.floor_hi)}" if x.floor_mean is not None else "")
        table.add_row(fmt_tokens(x.length), fmt_score(x.mean), shown, verdict(x.above, floor.confidence))
    console.print(table)
    console.print(f"{floor.family}: {floor.line()}", highlight=False)


def summary_cell(floor: Floor | None) -> str:
    """The profile summary's column: does the effective length stand above the floor?"""
    if floor is None:
        return "–"
    if floor.stands:
        return "yes"
    miss = floor.first_not_above
    return "no" + (f" ({fmt_tokens(miss.length)})" if miss is not None else "")
