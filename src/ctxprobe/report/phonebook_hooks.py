"""What the phone book adds to the reports: its metrics in the JSON report, a terminal
report of its own for phone-book runs, and no RULER prediction files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from ctxprobe.report.hooks import FamilyReportHooks


class PhonebookHooks(FamilyReportHooks):
    ruler_predictions = False  # no RULER task reads a phone book
    own_terminal = True

    def json_extra(self, records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
        from ctxprobe.analysis.phonebook import analyse, needle_results
        from ctxprobe.report.jsonreport import phonebook_to_dict

        results = needle_results(records)
        return phonebook_to_dict(analyse(results)) if results else None

    def print_runs(self, run_ids: list[str], store_path: str | Path, console: Console,
                   png_dir: Path | None) -> None:
        from ctxprobe.report.phonebook_plots import phonebook_report

        phonebook_report(run_ids, store_path, png_dir, console)


HOOKS = PhonebookHooks()
