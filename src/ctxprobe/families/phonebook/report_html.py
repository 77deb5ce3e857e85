"""The phone-book part of the HTML report: the verdict in words, the position and M-sweep
plots, runs side by side, and every metric with its bootstrap interval.

A phone-book run's cells are (book size, N needles), not (length, depth), so the generic
heatmap says little about it; this section shows what the experiment was built to show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.families.phonebook.analysis import METRICS, MetricValue, PhonebookAnalysis
from ctxprobe.report.html.parts import Figure, Table, figure, plotted
from ctxprobe.families.phonebook.report_terminal import PHONEBOOK_LEGEND, muc_prompt_tokens, phonebook_sentence
from ctxprobe.families.phonebook.report_xaxis import PlotOptions, trend_name, x_axis

__all__ = ["PhonebookPage", "phonebook_section", "phonebook_sentence"]

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


@dataclass(frozen=True)
class PhonebookPage:
    """One run's part of the page: its analysis (with its window) and how to draw it
    (``report --html``'s ``--x-axis``, ``--trend-degree``, ``--all-panels``)."""

    analysis: PhonebookAnalysis
    options: PlotOptions = PlotOptions()


def _axis_note(an: PhonebookAnalysis, x: str, keys: list[tuple[int, int]]) -> str:
    axis = x_axis(an, x, keys)
    return f"; x: {axis.label.splitlines()[0]}" + (f" ({x} axis omitted: {axis.omitted})" if axis.omitted else "")


def phonebook_section(analyses: Mapping[str, PhonebookAnalysis], png_dir: Path, *,
                      options: PlotOptions | None = None) -> dict[str, Any]:
    """``analyses``: run label → analysis, for the phone-book runs on the page, drawn as
    ``options`` say (default: degree 2, % of entries, one plot of each kind)."""
    from ctxprobe.families.phonebook.report_plots import compare_png, msweep_png, position_png

    opts = options or PlotOptions()
    kw: dict[str, Any] = {"degree": opts.degree, "x": opts.x_axis}
    verdicts = []
    figures: list[Figure] = []
    for label, an in analyses.items():
        verdicts.append((label, phonebook_sentence(an)))
        base = png_dir / _stem(label)  # the run's own folder, beside its heatmap and curve
        books = an.lengths if opts.panels else [an.lengths[-1]]
        for length in books:
            name = f"phonebook-position-M{length}.png" if opts.panels else "phonebook-position.png"
            keys = [(length, n) for n in an.needles if (length, n) in an.accuracy]
            position = plotted(lambda: position_png(an, base / name, length=length, title=label, **kw))
            figures.append(_figure(position, f"{label}: recall by position, {_book(an, length)}, one line per N"
                                             + _axis_note(an, opts.x_axis, keys)))
        for n in an.needles if opts.panels else [an.n_ref]:
            name = f"phonebook-msweep-N{n}.png" if opts.panels else "phonebook-msweep.png"
            keys = [(L, n) for L in an.lengths if (L, n) in an.accuracy]
            sweep = plotted(lambda: msweep_png(an, base / name, needles=n, title=label, **kw))
            figures.append(_figure(sweep, f"{label}: M-sweep at N={n}, one line per book size"
                                          + _axis_note(an, opts.x_axis, keys)))
    if len(analyses) > 1:
        first = next(iter(analyses.values()))
        both = plotted(lambda: compare_png(analyses, png_dir / "phonebook-compare.png", length=first.lengths[-1],
                                           needles=first.n_ref, degree=opts.degree))
        figures.insert(0, _figure(both, "runs compared at the first run's largest book and N (% of entries)"))
    return {"verdicts": verdicts, "figures": figures, "metrics": _metric_table(analyses),
            "trend": trend_name(opts.degree)}


def _book(an: PhonebookAnalysis, length: int) -> str:
    return ("largest book" if length == an.lengths[-1] else "book") + f" {length:,}"


def _stem(label: str) -> str:
    """The run id a label ("model · run id") ends with, safe as a folder name."""
    return "".join(c for c in label.rsplit(" · ", 1)[-1] if c.isalnum() or c in "-_") or "run"


def _figure(path: Path | None, caption: str) -> Figure:
    return figure(path, caption, caption)
