"""Phone-book plots and tables: accuracy vs position with the fitted trend, the M-sweep,
runs side by side, and the metric table.

Conventions of :mod:`ctxprobe.report.plots`: matplotlib imported lazily (``ctxprobe[plot]``),
Agg backend, the accuracy axis fixed at 0 → 1.05 on every plot so two plots mean the same
by the same height, ``tab:`` colours in order for lines, ``tab:red`` dashed for the bar.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ctxprobe.analysis.phonebook import METRICS, PhonebookAnalysis, analyse, needle_results
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.format import PHONEBOOK_LEGEND
from ctxprobe.report.plots import _pyplot, _save

_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
_FIGSIZE = (7.5, 4.5)


def _series(an: PhonebookAnalysis, length: int, needles: int) -> tuple[list[float], list[float], list[float], list[float]]:
    bins = sorted((b for b in an.bins if b.length == length and b.needles == needles), key=lambda b: b.bin)
    nan = float("nan")
    return ([100 * b.x for b in bins], [b.mean if b.mean is not None else nan for b in bins],
            [b.lo if b.n else nan for b in bins], [b.hi if b.n else nan for b in bins])


#: The trend's degree in the post's figures (its metric script fits degree 3: ``an.fits``).
TREND_DEGREE = 2


def _draw(ax: Any, an: PhonebookAnalysis, length: int, needles: int, colour: str, label: str,
          degree: int | None = TREND_DEGREE) -> None:
    """Per-bin accuracy with Wilson whiskers and a polynomial trend in one colour: of
    ``degree`` fitted to the bin means drawn, or (``degree`` None) the metric fit."""
    import numpy as np

    xs, means, los, his = _series(an, length, needles)
    if not xs:
        return
    err = [[m - lo for m, lo in zip(means, los)], [hi - m for m, hi in zip(means, his)]]
    ax.errorbar(xs, means, yerr=err, fmt="o", color=colour, markersize=4, alpha=0.75, elinewidth=0.8,
                capsize=0, label=f"{label} (per bin, Wilson 95%)")
    if degree is None:
        coeffs = an.fits.get((length, needles))
        name = "metric fit"
    else:
        ok = [(x / 100, m) for x, m in zip(xs, means) if m == m]  # measured bins only (NaN != NaN)
        deg = min(degree, len(ok) - 1)
        coeffs = [float(c) for c in np.polyfit([x for x, _ in ok], [m for _, m in ok], deg)] if deg >= 1 else None
        name = "trend"
    if coeffs is not None and len(xs) > 1:
        grid = np.linspace(min(xs), max(xs), 200)
        ax.plot(grid, np.clip(np.polyval(coeffs, grid / 100), 0, 1), color=colour, linewidth=2,
                label=f"{label} {name} (degree {len(coeffs) - 1})")


def _finish(ax: Any, fig: Any, title: str, bar: float | None, path: str | Path) -> Path:
    if bar is not None:
        ax.axhline(bar, color="tab:red", linestyle="--", linewidth=1.2, label=f"MUC bar {bar:g}")
    ax.set_xlim(0, 100)
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel("position in the phone book (% of entries, 0 = first)")
    ax.set_ylabel("retrieval accuracy")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left", fontsize=7, framealpha=0.9)
    ax.set_title(title, fontsize=10)
    return _save(fig, path)


def _length_label(an: PhonebookAnalysis, length: int) -> str:
    entries = an.entries.get(length, 0)
    if round(entries) == length:  # sized in entries
        return f"M={length:,} entries"
    return f"{length:,} tokens (M≈{entries:,.0f} entries)"


def position_png(an: PhonebookAnalysis, path: str | Path, *, length: int | None = None, title: str = "",
                 bar: float | None = 0.8, degree: int | None = TREND_DEGREE) -> Path:
    """Accuracy vs position at one length (default the longest), one line per N."""
    plt = _pyplot()
    length = length if length is not None else an.lengths[-1]
    fig, ax = plt.subplots(figsize=_FIGSIZE)
    for i, n in enumerate(an.needles):
        _draw(ax, an, length, n, _COLOURS[i % len(_COLOURS)], f"N={n}", degree)
    return _finish(ax, fig, f"{title} · phonebook {_length_label(an, length)}".strip(" ·"), bar, path)


def msweep_png(an: PhonebookAnalysis, path: str | Path, *, needles: int | None = None, title: str = "",
               bar: float | None = 0.8, degree: int | None = TREND_DEGREE) -> Path:
    """The M-sweep for one model: accuracy vs position, one line per length, at one N."""
    plt = _pyplot()
    n = needles or an.n_ref
    fig, ax = plt.subplots(figsize=_FIGSIZE)
    for i, length in enumerate(an.lengths):
        _draw(ax, an, length, n, _COLOURS[i % len(_COLOURS)], _length_label(an, length), degree)
    return _finish(ax, fig, f"{title} · phonebook M-sweep, N={n}".strip(" ·"), bar, path)


def compare_png(analyses: Mapping[str, PhonebookAnalysis], path: str | Path, *, length: int,
                needles: int, bar: float | None = 0.8) -> Path:
    """Runs (models, layouts) side by side: one line per run at one (length, N)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_FIGSIZE)
    for i, (label, an) in enumerate(analyses.items()):
        _draw(ax, an, length, needles, _COLOURS[i % len(_COLOURS)], label)
    return _finish(ax, fig, f"phonebook L={length}, N={needles}: runs compared", bar, path)


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
    table.caption = ("robust: ctxprobe's own (absolute drops of binned means, lenient scoring); post: the phone-book "
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
                     console: Console | None = None, *, bootstrap: int = 1000, panels: bool = False,
                     degree: int | None = TREND_DEGREE) -> PhonebookReport:
    """Load one or more phonebook runs, print their metric table and write their plots
    (one position plot at the largest M and one M-sweep at the largest N per run, or with
    ``panels`` one of each for every M and every N; with several runs, a side-by-side plot).
    ``degree``: the trend's degree (default 2, as the post's figures), None: the metric fit."""
    from ctxprobe.store import open_existing

    from ctxprobe.core.variant import split_label
    from ctxprobe.report.phonebook_terminal import light_records, render_phonebook_terminal, tally_answers

    analyses: dict[str, PhonebookAnalysis] = {}
    answers: dict[str, Any] = {}
    limits: dict[str, int | None] = {}
    with open_existing(store_path) as store:
        for run_id in run_ids:
            run = store.require_run(run_id)
            by_variant: dict[str | None, list[dict[str, Any]]] = {}
            for rec in light_records(store.iter_case_records(run.run_id)):
                base, variant = split_label(str(rec["family"]))  # prompt variants: one analysis each
                by_variant.setdefault(variant, []).append({**rec, "family": base})
            found = False
            for variant, records in by_variant.items():
                results = needle_results(records)
                if not results:
                    continue
                found = True
                label = f"{run.model} · {run.run_id[:8]}" + (f" · {variant}" if variant else "")
                limits[label] = (run.spec.get("decoding") or {}).get("max_tokens")
                analyses[label] = analyse(results, bootstrap=bootstrap)
                answers[label] = tally_answers(records, limits[label])
            if not found:
                raise CtxprobeError(_nothing_scored(run.run_id, [r for rs in by_variant.values() for r in rs]))
    if console is not None:
        render_phonebook_terminal(analyses, answers, limits, console)
        render_metrics_table(analyses, console)
    plots: list[Path] = []
    if out_dir is not None:
        out = Path(out_dir)
        for label, an in analyses.items():
            stem = "-".join(label.split(" · ")[1:])  # run id, and the variant if any
            if panels:
                for length in an.lengths:
                    plots.append(position_png(an, out / f"phonebook-{stem}-position-M{length}.png", title=label,
                                              length=length, degree=degree))
                for n in an.needles:
                    plots.append(msweep_png(an, out / f"phonebook-{stem}-msweep-N{n}.png", title=label, needles=n,
                                            degree=degree))
                continue
            plots.append(position_png(an, out / f"phonebook-{stem}-position.png", title=label, degree=degree))
            plots.append(msweep_png(an, out / f"phonebook-{stem}-msweep.png", title=label, degree=degree))
        if len(analyses) > 1:
            first = next(iter(analyses.values()))
            plots.append(compare_png(analyses, out / "phonebook-compare.png", length=first.lengths[-1],
                                     needles=first.n_ref))
    return PhonebookReport(analyses, plots)


def _nothing_scored(run_id: str, records: list[dict[str, Any]]) -> str:
    """Why a phone-book run has nothing to report, in one line: requests that failed
    (timeouts included) are harness failures, retried by rerunning the same command."""
    failed = [r for r in records if r.get("outcome") == "error"]
    unsent = sum(r.get("outcome") is None for r in records)
    if failed:
        timeouts = sum("timeout" in str(r.get("error") or "").lower() or "timed out" in str(r.get("error") or "").lower()
                       for r in failed)
        how = f", {timeouts} of them timed out (raise --timeout)" if timeouts else ""
        return (f"run {run_id} has no scored phonebook cases: {len(failed)} of {len(records)} ended in `error` after "
                f"retries{how}; rerun the same command to retry them")
    if unsent:
        return f"run {run_id} has no scored phonebook cases: {unsent} of {len(records)} were never answered"
    return f"run {run_id} has no scored phonebook cases"
