"""The phone-book part of the HTML report: the verdict in words, the position and M-sweep
plots, runs side by side, and every metric with its bootstrap interval.

A phone-book run's cells are (book size, N needles), not (length, depth), so the generic
heatmap says little about it; this section shows what the experiment was built to show.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxprobe.analysis.phonebook import METRICS, MetricValue, PhonebookAnalysis
from ctxprobe.report.format import PHONEBOOK_LEGEND
from ctxprobe.report.html_parts import Figure, Table, figure, plotted
from ctxprobe.report.phonebook_terminal import muc_prompt_tokens, phonebook_sentence

__all__ = ["phonebook_section", "phonebook_sentence"]

_CAPTION = ("MUC ≈ prompt tokens: the mean prompt of that book's cases at N_ref. robust: ctxprobe's own (absolute drops of binned means, lenient scoring), defined below. post: the "
            "phone-book post's metric script exactly (relative drops of a degree-3 fit's trough and peak on bin "
            "index, exact-match scoring, CSI against M=1,000 entries, NOI from N=10 to N=100; RRI is its RRS). "
            "Intervals: percentile bootstrap over runs (books); 'undefined' is the share of resamples in which a "
            "metric could not be computed (left out). " + PHONEBOOK_LEGEND)


def _value(m: MetricValue, tokens: str = "") -> str:
    def fmt(v: float | None) -> str:
        if v is None or (m.metric == "MUC" and v == 0):
            return "none" if m.metric == "MUC" else "n/a"
        return f"{v:,.0f}" if m.metric == "MUC" else f"{v:.1f}" if m.metric == "LCRDS" else f"{v:.3f}"

    text = fmt(m.value)
    if m.lo is not None and m.hi is not None:
        text += f" [{fmt(m.lo)}, {fmt(m.hi)}]"
    if m.undefined:
        text += f" ({m.undefined:.0%} undefined)"
    text += tokens
    if m.note:
        text += f" — {m.note}"
    return text


def _metric_table(analyses: Mapping[str, PhonebookAnalysis]) -> Table:
    labels = list(analyses)
    rows: dict[tuple[str, str, int | None], list[str]] = {}
    for i, an in enumerate(analyses.values()):
        for m in an.metrics:
            tokens = muc_prompt_tokens(an) if m.metric == "MUC" else None
            rows.setdefault((m.metric, m.variant, m.length), ["·"] * len(labels))[i] = _value(
                m, f" ≈ {tokens:,.0f} prompt tokens at N={an.n_ref}" if tokens is not None else "")
    ordered = sorted(rows.items(), key=lambda kv: (METRICS.index(kv[0][0]), kv[0][1], kv[0][2] or 0))
    body: list[list[Any]] = [[metric, variant, "" if length is None else f"{length:,}", *cells]
            for (metric, variant, length), cells in ordered]
    return Table(["metric", "variant", "book", *labels], body, caption=_CAPTION)


def phonebook_section(analyses: Mapping[str, PhonebookAnalysis], png_dir: Path) -> dict[str, Any]:
    """``analyses``: run label → analysis, for the phone-book runs on the page."""
    from ctxprobe.report.phonebook_plots import compare_png, msweep_png, position_png

    verdicts = []
    figures: list[Figure] = []
    for label, an in analyses.items():
        verdicts.append((label, phonebook_sentence(an)))
        base = png_dir / _stem(label)  # the run's own folder, beside its heatmap and curve
        position = plotted(lambda: position_png(an, base / "phonebook-position.png", title=label))
        sweep = plotted(lambda: msweep_png(an, base / "phonebook-msweep.png", title=label))
        figures += [_figure(position, f"{label}: recall by position, largest book, one line per N"),
                    _figure(sweep, f"{label}: M-sweep at N={an.n_ref}, one line per book size")]
    if len(analyses) > 1:
        first = next(iter(analyses.values()))
        both = plotted(lambda: compare_png(analyses, png_dir / "phonebook-compare.png", length=first.lengths[-1],
                                           needles=first.n_ref))
        figures.insert(0, _figure(both, "runs compared at the first run's largest book and N"))
    return {"verdicts": verdicts, "figures": figures, "metrics": _metric_table(analyses)}


def _stem(label: str) -> str:
    """The run id a label ("model · run id") ends with, safe as a folder name."""
    return "".join(c for c in label.rsplit(" · ", 1)[-1] if c.isalnum() or c in "-_") or "run"


def _figure(path: Path | None, caption: str) -> Figure:
    return figure(path, caption, caption)
