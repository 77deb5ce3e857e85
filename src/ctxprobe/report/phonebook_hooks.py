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
        from ctxprobe.report.jsonreport import phonebook_to_dict

        an = _analysis(records)
        return phonebook_to_dict(an) if an is not None else None

    def print_runs(self, run_ids: list[str], store_path: str | Path, console: Console,
                   png_dir: Path | None, *, options: Mapping[str, Any] | None = None) -> None:
        from ctxprobe.report.phonebook_plots import phonebook_report
        from ctxprobe.report.phonebook_xaxis import PlotOptions

        from ctxprobe.report.variants import stored_variant_lines

        phonebook_report(run_ids, store_path, png_dir, console, options=PlotOptions.from_mapping(options))
        for run_id in run_ids:  # prompt variants: each against the reference, as `ctxprobe phonebook` ends
            for line in stored_variant_lines(run_id, store_path):
                console.print(f"variants: {line}", highlight=False, markup=False)

    def html_data(self, records: Iterable[Mapping[str, Any]]) -> Any | None:
        return _analysis(records)

    def html_sentence(self, data: Any) -> str | None:
        from ctxprobe.report.phonebook_terminal import phonebook_sentence

        return phonebook_sentence(data)

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        from ctxprobe.report.html_parts import page_section
        from ctxprobe.report.html_phonebook import phonebook_section

        return page_section("phonebook.html.j2", [("phonebook", "Phone book")],
                            phonebook=phonebook_section(data, png_dir))


def _analysis(records: Iterable[Mapping[str, Any]]) -> Any | None:
    """The run's analysis with its book in prompt tokens (None: nothing scored)."""
    from ctxprobe.analysis.phonebook import analyse, needle_results
    from ctxprobe.analysis.phonebook_axes import token_axis, without_prompts

    light = list(without_prompts(records))
    results = needle_results(light)
    if not results:
        return None
    an = analyse(results)
    an.tokens = token_axis(light)
    return an


HOOKS = PhonebookHooks()
