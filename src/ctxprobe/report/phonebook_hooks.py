"""What the phone book adds to the reports: its metrics in the JSON report, a terminal
report of its own for phone-book runs, and no RULER prediction files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ctxprobe.report.hooks import FamilyReportHooks

if TYPE_CHECKING:
    from ctxprobe.report.html_parts import PageSection


class PhonebookHooks(FamilyReportHooks):
    ruler_predictions = False  # no RULER task reads a phone book
    own_terminal = True

    def json_extra(self, records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
        from ctxprobe.analysis.phonebook import analyse, needle_results
        from ctxprobe.report.jsonreport import phonebook_to_dict

        results = needle_results(records)
        return phonebook_to_dict(analyse(results)) if results else None

    def print_runs(self, run_ids: list[str], store_path: str | Path, console: Console,
                   png_dir: Path | None, **plot_options: Any) -> None:
        """``trend_degree`` (default 2): the plots' trend through the bin means (0: the
        metric fit); ``all_panels``: a position plot per M and an M-sweep per N (as
        ``ctxprobe phonebook``)."""
        from ctxprobe.errors import CtxprobeError
        from ctxprobe.report.phonebook_plots import phonebook_report
        from ctxprobe.report.variants import stored_variant_lines

        trend_degree = int(plot_options.pop("trend_degree", 2))
        all_panels = bool(plot_options.pop("all_panels", False))
        if plot_options:
            raise CtxprobeError(f"the phone book's plots take no option {', '.join(sorted(plot_options))}")
        if trend_degree < 0:
            raise CtxprobeError(f"--trend-degree must be 0 (the metric fit) or more, got {trend_degree}")
        phonebook_report(run_ids, store_path, png_dir, console, panels=all_panels,
                         degree=None if trend_degree == 0 else trend_degree)
        for run_id in run_ids:  # prompt variants: each against the reference, as `ctxprobe phonebook` ends
            for line in stored_variant_lines(run_id, store_path):
                console.print(f"variants: {line}", highlight=False, markup=False)

    def html_data(self, records: Iterable[Mapping[str, Any]]) -> Any | None:
        from ctxprobe.analysis.phonebook import analyse, needle_results

        results = needle_results(records)
        return analyse(results) if results else None

    def html_sentence(self, data: Any) -> str | None:
        from ctxprobe.report.phonebook_terminal import phonebook_sentence

        return phonebook_sentence(data)

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        from ctxprobe.report.html_parts import page_section
        from ctxprobe.report.html_phonebook import phonebook_section

        return page_section("phonebook.html.j2", [("phonebook", "Phone book")],
                            phonebook=phonebook_section(data, png_dir))


HOOKS = PhonebookHooks()
