"""The sweep's progress bar: ETA, running accuracy and spend, one fixed-width label per case."""

from __future__ import annotations

from rich.console import Console
from rich.table import Column
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ctxprobe.core.case import Case


#: Below this many columns the label leaves out the last case's outcome: with it, the bar's
#: counts and times no longer fit 80 columns and rich cuts them mid-number ("400/…", "0:0…").
WIDE_COLUMNS = 100


def progress_label(case: Case, outcome: str, unit: str = "tokens", *, with_outcome: bool = True) -> str:
    """``niah          8K d=0.25 correct``: fixed width, so the bar does not jump sideways
    (without ``with_outcome``: ``niah          8K d=0.25``, for a narrow terminal)."""
    n = case.cell.length
    if unit == "entries":  # a phone book: its size, not a token length
        where = f"{n:>7,} entries"
    else:
        length = f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n)
        where = f"{length:>5} d={case.cell.depth:<4g}"
    family = case.cell.family if len(case.cell.family) <= 10 else case.cell.family[:9] + "…"
    return f"{family:<10} {where:<15} {outcome:<16}" if with_outcome else f"{family:<10} {where:<15}"


class Display:
    """A progress bar with ETA and a running accuracy, on stderr."""

    def __init__(self, total: int, done: int, enabled: bool, console: Console,
                 units: dict[str, str] | None = None) -> None:
        self.units = units or {}  # family label -> "entries" for books sized in entries
        self.wide = console.width >= WIDE_COLUMNS  # narrower: no outcome in the label, counts and times whole
        whole = Column(no_wrap=True)  # counts and times are never cut: the label or the bar gives way
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(),
            MofNCompleteColumn(table_column=whole), TextColumn("{task.fields[acc]}", table_column=whole),
            TimeElapsedColumn(table_column=whole), TextColumn("ETA", table_column=whole),
            TimeRemainingColumn(table_column=whole),
            console=console, disable=not enabled, transient=False,
        )
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
        label = progress_label(case, outcome, self.units.get(case.cell.family, "tokens"), with_outcome=self.wide)
        self.progress.update(self.task, advance=1, acc=acc, description=label)
