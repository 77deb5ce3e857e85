"""What the phone book adds to the reports: its metrics in the JSON report, a terminal
report of its own for phone-book runs, and no RULER prediction files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.hooks import FamilyReportHooks

if TYPE_CHECKING:
    from ctxprobe.report.html.parts import PageSection
    from ctxprobe.store import RunRecord
    from ctxprobe.tokenizers.base import Tokenizer


class PhonebookHooks(FamilyReportHooks):
    ruler_predictions = False  # no RULER task reads a phone book
    own_terminal = True
    json_reads_prompts = True  # the needles' token offsets are counted in the prompt

    def json_extra(self, records: Iterable[CaseRecord]) -> dict[str, Any] | None:
        an = _analysis(records)
        return phonebook_to_dict(an) if an is not None else None

    def print_runs(self, run_ids: list[str], store_path: str | Path, console: Console,
                   png_dir: Path | None, *, options: Mapping[str, Any] | None = None) -> None:
        from ctxprobe.families.phonebook.report_plots import phonebook_report
        from ctxprobe.families.phonebook.report_xaxis import PlotOptions

        from ctxprobe.report.variants import stored_variant_lines

        phonebook_report(run_ids, store_path, png_dir, console, options=PlotOptions.from_mapping(options))
        for run_id in run_ids:  # prompt variants: each against the reference, as `ctxprobe phonebook` ends
            for line in stored_variant_lines(run_id, store_path):
                console.print(f"variants: {line}", highlight=False, markup=False)

    html_options = ("trend_degree", "all_panels", "x_axis")

    def html_data(self, records: Iterable[CaseRecord]) -> Any | None:
        return _analysis(records)

    def html_run_data(self, records: Iterable[CaseRecord], run: RunRecord,
                      options: Mapping[str, Any]) -> Any | None:
        """The analysis with the run's window, drawn as ``options`` say: the tokens and
        window axes count the text around the book with the run's tokenizer when it counts
        here, as the terminal's PNGs do (only then: it reads every prompt once more)."""
        from ctxprobe.families.phonebook.analysis_axes import offline_tokenizer, run_window
        from ctxprobe.families.phonebook.report_html import PhonebookPage
        from ctxprobe.families.phonebook.report_xaxis import PlotOptions

        opts = PlotOptions.from_mapping(options)
        an = _analysis(records, offline_tokenizer(run.tokenizer) if opts.x_axis != "entries" else None)
        if an is None:
            return None
        an.window = run_window(run.model, run.meta)
        return PhonebookPage(an, opts)

    def html_sentence(self, data: Any) -> str | None:
        from ctxprobe.families.phonebook.report_html import PhonebookPage
        from ctxprobe.families.phonebook.report_terminal import phonebook_sentence

        return phonebook_sentence(data.analysis if isinstance(data, PhonebookPage) else data)

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        from ctxprobe.report.html.parts import page_section
        from ctxprobe.families.phonebook.report_html import PhonebookPage, phonebook_section
        from ctxprobe.families.phonebook.report_xaxis import PlotOptions

        pages = {label: d if isinstance(d, PhonebookPage) else PhonebookPage(d, PlotOptions())
                 for label, d in data.items()}
        options = next(iter(pages.values())).options  # one page: one set of report flags
        return page_section("ctxprobe.families.phonebook:report.html.j2", [("phonebook", "Phone book")],
                            phonebook=phonebook_section({k: p.analysis for k, p in pages.items()}, png_dir,
                                                        options=options))


def _analysis(records: Iterable[CaseRecord], tokenizer: Tokenizer | None = None) -> Any | None:
    """The run's analysis with its book in prompt tokens (None: nothing scored); without
    ``tokenizer`` the text around the book is spread over its characters."""
    from ctxprobe.families.phonebook.analysis import analyse, needle_results
    from ctxprobe.families.phonebook.analysis_axes import token_axis, without_prompts

    light = list(without_prompts(records, tokenizer))
    results = needle_results([lt.record for lt in light])
    if not results:
        return None
    an = analyse(results)
    an.tokens = token_axis(light)
    return an


HOOKS = PhonebookHooks()


def phonebook_to_dict(an: Any) -> dict[str, Any]:
    """A :class:`~ctxprobe.families.phonebook.analysis.PhonebookAnalysis` as JSON: every metric of both
    variants (``robust``: ctxprobe's own; ``post``: the phone-book post's metric script) with
    its bootstrap interval, the share of undefined resamples and any note, plus per-bin and
    per-configuration accuracy."""
    return {
        "lengths": an.lengths, "needles": an.needles, "n_ref": an.n_ref, "length_ref": an.length_ref,
        "entries": {str(k): v for k, v in an.entries.items()},
        "interval": "percentile bootstrap over runs (books), 95%",
        "accuracy_interval": "exact 95% at n/deff, clustered by book (Kish design effect at its 95% upper bound)",
        "metrics": [asdict(m) for m in an.metrics],
        "accuracy": [{"length": L, "needles": n, "mean": a[0], "lo": a[1], "hi": a[2]}
                     for (L, n), a in sorted(an.accuracy.items())],
        "bins": [asdict(b) for b in an.bins],
        **_tokens(an),
    }


def _tokens(an: Any) -> dict[str, Any]:
    """The book in prompt tokens: each (book, N)'s mean prompt and the MUC book's (at
    N_ref), or why they are unknown."""
    from ctxprobe.families.phonebook.analysis_axes import muc_tokens

    axis = an.tokens
    if axis is None or axis.reason:
        return {"muc_tokens": None, "prompt_tokens": [],
                "prompt_tokens_note": axis.reason if axis is not None else "not read"}
    return {"muc_tokens": muc_tokens(an.metric("MUC", "robust", None).value, an.n_ref, axis),
            "prompt_tokens": [{"length": L, "needles": n, "tokens": t} for (L, n), t in sorted(axis.prompt.items())]}
