"""The sweep's progress bar: ETA, running accuracy and spend, one fixed-width label per case."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ctxprobe.core.case import Case


def progress_label(case: Case, outcome: str, unit: str = "tokens") -> str:
    """``niah          8K d=0.25 correct``: fixed width, so the bar does not jump sideways."""
    n = case.cell.length
    if unit == "entries":  # a phone book: its size, not a token length
        where = f"{n:>7,} entries"
    else:
        length = f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n)
        where = f"{length:>5} d={case.cell.depth:<4g}"
    family = case.cell.family if len(case.cell.family) <= 10 else case.cell.family[:9] + "…"
    return f"{family:<10} {where:<15} {outcome:<16}"


class Display:
    """A progress bar with ETA and a running accuracy, on stderr."""

    def __init__(self, total: int, done: int, enabled: bool, console: Console,
                 units: dict[str, str] | None = None) -> None:
        self.units = units or {}  # family label -> "entries" for books sized in entries
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[acc]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
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
        label = progress_label(case, outcome, self.units.get(case.cell.family, "tokens"))
        self.progress.update(self.task, advance=1, acc=acc, description=label)
