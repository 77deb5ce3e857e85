"""Phone-book plots and tables: accuracy vs position with the fitted trend, the M-sweep,
runs side by side, and the metric table.

Conventions of :mod:`ctxprobe.report.plots`: matplotlib imported lazily (``ctxprobe[plot]``),
Agg backend, the accuracy axis fixed at 0 → 1.05 on every plot so two plots mean the same
by the same height, ``tab:`` colours in order for lines, ``tab:red`` dashed for the bar.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ctxprobe.families.phonebook.analysis import METRICS, PhonebookAnalysis, analyse, needle_results
from ctxprobe.core.records import CaseRecord
from ctxprobe.errors import CtxprobeError
from ctxprobe.families.phonebook.report_terminal import PHONEBOOK_LEGEND, muc_prompt_tokens
from ctxprobe.families.phonebook.report_xaxis import TREND_DEGREE, PlotOptions, XAxis, trend_name, x_axis
from ctxprobe.report.plots import _pyplot, _save

_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
_FIGSIZE = (7.5, 4.5)


def _series(an: PhonebookAnalysis, length: int, needles: int
            ) -> tuple[list[int], list[float], list[float], list[float], list[float]]:
    bins = sorted((b for b in an.bins if b.length == length and b.needles == needles), key=lambda b: b.bin)
    nan = float("nan")
    return ([b.bin for b in bins], [b.x for b in bins], [b.mean if b.mean is not None else nan for b in bins],
            [b.lo if b.n else nan for b in bins], [b.hi if b.n else nan for b in bins])


def _draw(ax: Any, an: PhonebookAnalysis, length: int, needles: int, colour: str, label: str,
          degree: int | None = TREND_DEGREE, axis: XAxis | None = None) -> None:
    """Per-bin accuracy with Wilson whiskers and a polynomial trend in one colour: of
    ``degree`` fitted to the bin means drawn, or (``degree`` None) the metric fit. Both are
    fitted on the bin's place in the book; the points sit where ``axis`` puts each bin, the
    trend along the straight line through those places (exact for % of entries)."""
    import numpy as np

    axis = axis or XAxis("entries", "")
    bins, fracs, means, los, his = _series(an, length, needles)
    if not bins:
        return
    xs = axis.xs(an, length, needles, bins, fracs)
    err = [[m - lo for m, lo in zip(means, los)], [hi - m for m, hi in zip(means, his)]]
    ax.errorbar(xs, means, yerr=err, fmt="o", color=colour, markersize=4, alpha=0.75, elinewidth=0.8,
                capsize=0, label=f"{label} (per bin, Wilson 95%)")
    if degree is None:
        coeffs = an.fits.get((length, needles))
    else:
        ok = [(f, m) for f, m in zip(fracs, means) if m == m]  # measured bins only (NaN != NaN)
        deg = min(degree, len(ok) - 1)
        coeffs = [float(c) for c in np.polyfit([f for f, _ in ok], [m for _, m in ok], deg)] if deg >= 1 else None
    if coeffs is not None and len(xs) > 1:
        grid = np.linspace(min(fracs), max(fracs), 200)
        name = trend_name(degree, len(coeffs) - 1)
        place = np.polyfit(fracs, xs, 1)  # the book's share → this axis: a line (tokens grow with entries)
        ax.plot(np.polyval(place, grid), np.clip(np.polyval(coeffs, grid), 0, 1), color=colour, linewidth=2,
                label=f"{label} {name}")


def _finish(ax: Any, title: str, bar: float | None, axis: XAxis, upper: float) -> None:
    if bar is not None:
        ax.axhline(bar, color="tab:red", linestyle="--", linewidth=1.2, label=f"MUC bar {bar:g}")
    ax.set_xlim(0, max(100.0, upper) if axis.kind == "window" else upper)
    if axis.kind == "window" and upper > 100:
        ax.axvline(100, color="grey", linestyle=":", linewidth=1, label="the end of the window")
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel(axis.label)
    ax.set_ylabel("retrieval accuracy")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left", fontsize=7, framealpha=0.9)
    ax.set_title(title, fontsize=9)


def described(fig: Any) -> dict[str, str]:
    """What a plot draws, as its PNG's text chunks: its title, x axis (label and range) and
    legend, so a reader (or a test) can tell without looking at the pixels."""
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    return {"Title": ax.get_title(), "X axis": ax.get_xlabel(), "X range": f"{lo:g} to {hi:g}",
            "Legend": " | ".join(ax.get_legend_handles_labels()[1])}


def _length_label(an: PhonebookAnalysis, length: int) -> str:
    entries = an.entries.get(length, 0)
    if round(entries) == length:  # sized in entries
        return f"M={length:,} entries"
    return f"{length:,} tokens (M≈{entries:,.0f} entries)"


def _sizes(an: PhonebookAnalysis, lengths: Sequence[int]) -> str:
    """``M=100, 200 entries`` (books in entries) or each length's own label."""
    if all(round(an.entries.get(L, 0)) == L for L in lengths):
        return f"M={', '.join(f'{L:,}' for L in lengths)} entries"
    return "; ".join(_length_label(an, L) for L in lengths)


def _titled(label: str, what: str) -> str:
    return f"{label}\n{what}" if label else what


def position_figure(an: PhonebookAnalysis, *, length: int | None = None, title: str = "", bar: float | None = 0.8,
                    degree: int | None = TREND_DEGREE, x: str = "entries") -> tuple[Any, XAxis]:
    """Accuracy vs position at one length (default the longest), one line per N: the
    figure (not saved) and the x axis it drew."""
    plt = _pyplot()
    length = length if length is not None else an.lengths[-1]
    keys = [(length, n) for n in an.needles if (length, n) in an.accuracy]
    axis = x_axis(an, x, keys)
    fig, ax = plt.subplots(figsize=_FIGSIZE)
    for i, (_, n) in enumerate(keys):
        _draw(ax, an, length, n, _COLOURS[i % len(_COLOURS)], f"N={n}", degree, axis)
    what = (f"phonebook recall by position · {_length_label(an, length)} · "
            f"N={', '.join(str(n) for _, n in keys)} · {trend_name(degree)}")
    _finish(ax, _titled(title, what), bar, axis, axis.upper(an, keys))
    return fig, axis


def msweep_figure(an: PhonebookAnalysis, *, needles: int | None = None, title: str = "", bar: float | None = 0.8,
                  degree: int | None = TREND_DEGREE, x: str = "entries") -> tuple[Any, XAxis]:
    """The M-sweep for one model: accuracy vs position, one line per length, at one N
    (default the largest): the figure (not saved) and the x axis it drew."""
    plt = _pyplot()
    n = needles or an.n_ref
    keys = [(L, n) for L in an.lengths if (L, n) in an.accuracy]
    axis = x_axis(an, x, keys)
    fig, ax = plt.subplots(figsize=_FIGSIZE)
    for i, (length, _) in enumerate(keys):
        _draw(ax, an, length, n, _COLOURS[i % len(_COLOURS)], _length_label(an, length), degree, axis)
    what = f"phonebook M-sweep · N={n} · {_sizes(an, [L for L, _ in keys])} · {trend_name(degree)}"
    _finish(ax, _titled(title, what), bar, axis, axis.upper(an, keys))
    return fig, axis


def position_png(an: PhonebookAnalysis, path: str | Path, *, length: int | None = None, title: str = "",
                 bar: float | None = 0.8, degree: int | None = TREND_DEGREE, x: str = "entries") -> Path:
    """:func:`position_figure`, saved as a PNG."""
    fig = position_figure(an, length=length, title=title, bar=bar, degree=degree, x=x)[0]
    return _save(fig, path, described(fig))


def msweep_png(an: PhonebookAnalysis, path: str | Path, *, needles: int | None = None, title: str = "",
               bar: float | None = 0.8, degree: int | None = TREND_DEGREE, x: str = "entries") -> Path:
    """:func:`msweep_figure`, saved as a PNG."""
    fig = msweep_figure(an, needles=needles, title=title, bar=bar, degree=degree, x=x)[0]
    return _save(fig, path, described(fig))


def compare_png(analyses: Mapping[str, PhonebookAnalysis], path: str | Path, *, length: int,
                needles: int, bar: float | None = 0.8, degree: int | None = TREND_DEGREE) -> Path:
    """Runs (models, layouts) side by side: one line per run at one (length, N), on the
    book's % of entries (the runs' prompts may differ in tokens)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_FIGSIZE)
    for i, (label, an) in enumerate(analyses.items()):
        _draw(ax, an, length, needles, _COLOURS[i % len(_COLOURS)], label, degree)
    first = next(iter(analyses.values()))
    what = f"phonebook runs compared · {_length_label(first, length)} · N={needles} · {trend_name(degree)}"
    _finish(ax, what, bar, x_axis(first, "entries", []), 100.0)
    return _save(fig, path, described(fig))


def _fmt(v: float | None, metric: str) -> str:
    if v is None:
        return "none" if metric == "MUC" else "n/a"
    if metric == "MUC":
        return "none" if v == 0 else f"{v:.0f}"  # 0 in an interval: no length qualified
    return f"{v:.1f}" if metric == "LCRDS" else f"{v:.3f}"


def render_metrics_table(analyses: Mapping[str, PhonebookAnalysis], console: Console) -> None:
    """Every metric of every run side by side: value [bootstrap 95% interval]."""
    table = Table(title="phonebook metrics (value \\[bootstrap 95%])", title_justify="left", header_style="bold")
    table.add_column("metric")
    table.add_column("variant")
    table.add_column("book", justify="right")
    for label in analyses:
        table.add_column(label, justify="center")
    rows: dict[tuple[str, str, int | None], list[str]] = {}
    notes: list[str] = []
    for label, an in analyses.items():
        for m in an.metrics:
            cell = _fmt(m.value, m.metric)
            if m.lo is not None and m.hi is not None:
                cell += f" [{_fmt(m.lo, m.metric)}, {_fmt(m.hi, m.metric)}]"
            if m.undefined:
                cell += f" ({m.undefined:.0%} undef.)"
            if m.metric == "MUC" and (tokens := muc_prompt_tokens(an)) is not None:
                cell += f" ≈ {tokens:,.0f} tok"
            if m.note:
                notes.append(f"{m.metric} {m.variant}{'' if m.length is None else f' {m.length}'}"
                             f"{'' if len(analyses) == 1 else f' ({label})'}: {m.note}")
                cell += f" ({len(notes)})"
            rows.setdefault((m.metric, m.variant, m.length), ["·"] * len(analyses))[list(analyses).index(label)] = \
                escape(cell)
    for (metric, variant, length), cells in sorted(rows.items(), key=lambda kv: (METRICS.index(kv[0][0]),
                                                                              kv[0][1], kv[0][2] or 0)):
        book = "" if length is None else _length_label(next(iter(analyses.values())), length)
        table.add_row(metric, variant, book, *cells)
    table.caption = ("MUC ≈ tok: that book's mean prompt tokens at N_ref. robust: ctxprobe's own (absolute drops of binned means, lenient scoring); post: the phone-book "
                     "post's metric script (relative drops of a degree-3 fit's trough and peak, exact-match scoring; "
                     "CSI against M=1,000, NOI from N=10 to N=100; RRI is its RRS). undef.: resamples in which the "
                     "metric was undefined, left out of its interval. " + PHONEBOOK_LEGEND)
    console.print(table)
    for i, note in enumerate(notes, 1):
        console.print(escape(f"({i}) {note}"), highlight=False)


@dataclass(frozen=True)
class PhonebookReport:
    analyses: dict[str, PhonebookAnalysis]  # run label → analysis
    plots: list[Path]


def phonebook_report(run_ids: list[str], store_path: str | Path, out_dir: str | Path | None = None,
                     console: Console | None = None, *, bootstrap: int = 1000,
                     options: PlotOptions | None = None) -> PhonebookReport:
    """Load one or more phonebook runs, print their metric table and write their plots
    (one position plot at the largest M and one M-sweep at the largest N per run, or with
    ``options.panels`` one of each for every M and every N; with several runs, a
    side-by-side plot), the trend and the x axis as ``options`` say (default: degree 2
    as the post's figures, and % of entries, the post's position measure)."""
    from ctxprobe.store import open_existing

    from ctxprobe.families.phonebook.analysis_axes import (LightRecord, offline_tokenizer, run_window, token_axis,
                                                           without_prompts)
    from ctxprobe.core.variant import split_label
    from ctxprobe.families.phonebook.report_terminal import render_phonebook_terminal, tally_answers

    opts = options or PlotOptions()
    analyses: dict[str, PhonebookAnalysis] = {}
    answers: dict[str, Any] = {}
    limits: dict[str, int | None] = {}
    with open_existing(store_path) as store:
        for run_id in run_ids:
            run = store.require_run(run_id)
            by_variant: dict[str | None, list[LightRecord]] = {}
            tokenizer = offline_tokenizer(run.tokenizer)
            for light in without_prompts(store.iter_case_records(run.run_id), tokenizer):
                base, variant = split_label(light.record.family)  # prompt variants: one analysis each
                by_variant.setdefault(variant, []).append(replace(light, record=replace(light.record, family=base)))
            found = False
            for variant, lights in by_variant.items():
                records = [light.record for light in lights]
                results = needle_results(records)
                if not results:
                    continue
                found = True
                label = f"{run.model} · {run.run_id[:8]}" + (f" · {variant}" if variant else "")
                limits[label] = (run.spec.get("decoding") or {}).get("max_tokens")
                an = analyse(results, bootstrap=bootstrap)
                an.tokens, an.window = token_axis(lights), run_window(run.model, run.meta)
                analyses[label] = an
                answers[label] = tally_answers(records, limits[label])
            if not found:
                raise CtxprobeError(_nothing_scored(run.run_id, [lt.record for ls in by_variant.values() for lt in ls]))
    if console is not None:
        render_phonebook_terminal(analyses, answers, limits, console)
        render_metrics_table(analyses, console)
    plots: list[Path] = []
    if out_dir is not None:
        plots, omitted = _write_plots(analyses, Path(out_dir), opts)
        for label, reason in omitted.items():
            if console is not None:
                console.print(escape(f"note: {label}: its plots are drawn on % of entries, the {opts.x_axis} axis "
                                     f"is omitted: {reason}"), highlight=False)
    return PhonebookReport(analyses, plots)


def _write_plots(analyses: Mapping[str, PhonebookAnalysis], out: Path, opts: PlotOptions
                 ) -> tuple[list[Path], dict[str, str]]:
    """The PNGs of ``analyses``, and why the x axis asked for was omitted (run label → why)."""
    plots: list[Path] = []
    omitted: dict[str, str] = {}
    kw: dict[str, Any] = {"degree": opts.degree, "x": opts.x_axis}
    for label, an in analyses.items():
        stem = "-".join(label.split(" · ")[1:])  # run id, and the variant if any
        todo: list[tuple[str, Callable[[], tuple[Any, XAxis]]]] = []
        if opts.panels:
            todo += [(f"position-M{length}", partial(position_figure, an, title=label, length=length, **kw))
                     for length in an.lengths]
            todo += [(f"msweep-N{n}", partial(msweep_figure, an, title=label, needles=n, **kw)) for n in an.needles]
        else:
            todo += [("position", partial(position_figure, an, title=label, **kw)),
                     ("msweep", partial(msweep_figure, an, title=label, **kw))]
        for name, draw in todo:  # one figure open at a time
            fig, axis = draw()
            plots.append(_save(fig, out / f"phonebook-{stem}-{name}.png", described(fig)))
            if axis.omitted:
                omitted.setdefault(label, axis.omitted)
    if len(analyses) > 1:
        first = next(iter(analyses.values()))
        plots.append(compare_png(analyses, out / "phonebook-compare.png", length=first.lengths[-1],
                                 needles=first.n_ref, degree=opts.degree))
    return plots, omitted


def _nothing_scored(run_id: str, records: list[CaseRecord]) -> str:
    """Why a phone-book run has nothing to report, in one line: requests that failed
    (timeouts included) are harness failures, retried by rerunning the same command."""
    failed = [r for r in records if r.outcome == "error"]
    unsent = sum(r.outcome is None for r in records)
    if failed:
        timeouts = sum("timeout" in (r.error or "").lower() or "timed out" in (r.error or "").lower() for r in failed)
        how = f", {timeouts} of them timed out (raise --timeout)" if timeouts else ""
        return (f"run {run_id} has no scored phonebook cases: {len(failed)} of {len(records)} ended in `error` after "
                f"retries{how}; rerun the same command to retry them")
    if unsent:
        return f"run {run_id} has no scored phonebook cases: {unsent} of {len(records)} were never answered"
    return f"run {run_id} has no scored phonebook cases"
