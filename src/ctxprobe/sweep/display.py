"""The sweep's progress bar: ETA, running accuracy and spend, one fixed-width label per case."""

from __future__ import annotations

from rich.console import Console
from rich.table import Column
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from ctxprobe.core.case import Case


#: Below this many columns the label leaves out the last case's outcome: with it, the bar's
#: counts and times no longer fit 80 columns and rich cuts them mid-number ("400/…", "0:0…").
WIDE_COLUMNS = 100
#: Below this many: no bar and no elapsed time, and the label is the family and length only.
NARROW_COLUMNS = 80
#: Below this many: no label either — the counts, accuracy, spend and ETA stay whole down to 40.
BARE_COLUMNS = 60


def progress_label(case: Case, outcome: str, unit: str = "tokens", *, with_outcome: bool = True,
                   with_depth: bool = True) -> str:
    """``niah          8K d=0.25 correct``: fixed width, so the bar does not jump sideways
    (without ``with_outcome``: ``niah          8K d=0.25``, for a narrow terminal; without
    ``with_depth`` too: ``niah          8K``, for a narrower one)."""
    n = case.cell.length
    if unit == "entries":  # a phone book: its size, not a token length
        where = f"{n:>7,} entries"
    else:
        length = f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n)
        where = f"{length:>5} d={case.cell.depth:<4g}" if with_depth else f"{length:>5}"
    family = case.cell.family if len(case.cell.family) <= 10 else case.cell.family[:9] + "…"
    if not with_depth:
        return f"{family:<10} {where}"
    return f"{family:<10} {where:<15} {outcome:<16}" if with_outcome else f"{family:<10} {where:<15}"


class Display:
    """A progress bar with ETA and a running accuracy, on stderr."""

    def __init__(self, total: int, done: int, enabled: bool, console: Console,
                 units: dict[str, str] | None = None) -> None:
        self.units = units or {}  # family label -> "entries" for books sized in entries
        width = console.width
        self.wide = width >= WIDE_COLUMNS  # narrower: no outcome in the label, counts and times whole
        self.narrow = width < NARROW_COLUMNS  # narrower still: no bar, no elapsed time, no depth
        whole = Column(no_wrap=True)  # counts and times are never cut: the label or the bar gives way
        columns: list[ProgressColumn] = [TextColumn("[bold]{task.description}")] if width >= BARE_COLUMNS else []
        columns += [] if self.narrow else [BarColumn()]
        columns += [MofNCompleteColumn(table_column=whole), TextColumn("{task.fields[acc]}", table_column=whole)]
        columns += [] if self.narrow else [TimeElapsedColumn(table_column=whole)]
        columns += [TextColumn("ETA", table_column=whole), TimeRemainingColumn(table_column=whole)]
        self.progress = Progress(*columns, console=console, disable=not enabled, transient=False)
        self.task = self.progress.add_task("sweep", total=total, completed=done, acc="")
        self.scored = 0
        self.correct = 0.0

    def update(self, case: Case, score: float | None, outcome: str, spent: float | None = None) -> None:
        if score is not None:
            self.scored += 1
            self.correct += score
        acc = f"acc {self.correct / self.scored:.2f}" if self.scored else ""
        if spent is not None:
            acc += f" ${spent:.4f}"
        label = progress_label(case, outcome, self.units.get(case.cell.family, "tokens"), with_outcome=self.wide,
                               with_depth=not self.narrow)
        self.progress.update(self.task, advance=1, acc=acc, description=label)
