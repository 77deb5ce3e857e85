"""A family's own curve as a PNG: measured points with 95% whiskers against an axis of the
family's choosing (updates per key, answer length, instruction count…), and optionally a
fitted line, the bar and one marked x.

A family's report hooks build a :class:`PointsPlot` from the object its JSON report carries
(a pure function, so a test can hold the plotted numbers to the JSON's) and hand it to
:func:`points_png`, which draws exactly that and nothing it computes itself. Conventions of
:mod:`ctxprobe.report.plots`: matplotlib imported lazily (``ctxprobe[plot]``, else a
one-line error naming it), Agg backend, the accuracy axis fixed at 0 → 1.05, ``tab:red``
dashed for the bar, black dotted for the marked length.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ctxprobe.report.plots import _DPI, _FIGSIZE, _pyplot, _save


@dataclass(frozen=True)
class Series:
    """One line of points: ``ys`` None where nothing was scored (a gap, with ``gap_note``
    written there), ``lo``/``hi`` the 95% interval of each point (None: no whisker)."""

    label: str
    xs: list[float]
    ys: list[float | None]
    lo: list[float | None]
    hi: list[float | None]
    colour: str = "tab:blue"
    marker: str = "o"
    gap_note: str = "no scored\ncases"


@dataclass(frozen=True)
class Line:
    """A fitted line, drawn through ``xs`` (dense enough to look straight on the axis)."""

    label: str
    xs: list[float]
    ys: list[float]


@dataclass(frozen=True)
class PointsPlot:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    log_base: float | None = None  # None: a linear x axis
    fit: Line | None = None
    bar: float | None = None  # the bar, a dashed horizontal line
    mark_x: float | None = None  # a length to mark (an effective length, a capacity): a dotted vertical line
    mark_label: str = ""  # said beside that line, or in a corner when mark_x is None
    xticks: list[tuple[float, str]] = field(default_factory=list)


def points_png(plot: PointsPlot, path: str | Path) -> Path:
    """``plot`` drawn as a PNG at ``path``."""
    plt = _pyplot()
    nan = float("nan")
    fig, ax = plt.subplots(figsize=_FIGSIZE, dpi=_DPI)
    for i, s in enumerate(plot.series):
        ys = [nan if y is None else y for y in s.ys]
        err = [[0.0 if y is None or lo is None else y - lo for y, lo in zip(s.ys, s.lo)],
               [0.0 if y is None or hi is None else hi - y for y, hi in zip(s.ys, s.hi)]]
        ax.errorbar(_dodged(plot, s.xs, i), ys, yerr=err, color=s.colour, marker=s.marker, linewidth=2, markersize=6, capsize=3,
                    elinewidth=1, label=s.label)
        for x, y in zip(s.xs, s.ys):
            if y is None:  # say so, rather than let the gap look like a plotting glitch
                ax.annotate(s.gap_note, (x, 0.5), ha="center", va="center", fontsize=8, color="grey")
    if plot.fit is not None:
        ax.plot(plot.fit.xs, plot.fit.ys, color="tab:grey", linestyle="-", linewidth=1.3, label=plot.fit.label)
    if plot.bar is not None:
        ax.axhline(plot.bar, color="tab:red", linestyle="--", linewidth=1.3, label=f"bar {plot.bar:g}")
    if plot.log_base is not None:
        ax.set_xscale("log", base=plot.log_base)
    xs = sorted({x for s in plot.series for x in s.xs})
    if plot.xticks:
        ax.set_xticks([x for x, _ in plot.xticks], [t for _, t in plot.xticks])
        ax.minorticks_off()  # unlabeled minor ticks between the measured values are clutter
    if xs:
        lo_x, hi_x = xs[0], xs[-1]
        if plot.log_base is not None:
            ax.set_xlim(lo_x / plot.log_base ** 0.35, hi_x * plot.log_base ** 0.35)
        else:
            pad = max((hi_x - lo_x) * 0.06, 0.5)
            ax.set_xlim(lo_x - pad, hi_x + pad)
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel(plot.xlabel)
    ax.set_ylabel(plot.ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    ax.grid(True, axis="x", alpha=0.15)
    box = {"boxstyle": "round,pad=0.25", "fc": "white", "ec": "none", "alpha": 0.8}
    if plot.mark_x is not None:
        ax.axvline(plot.mark_x, color="black", linestyle=":", linewidth=1.5)
        left = bool(xs) and plot.mark_x >= xs[-1]  # at the right edge: write it on the left
        ax.annotate(plot.mark_label, xy=(plot.mark_x, 0.04), xytext=(-5 if left else 5, 0), textcoords="offset points",
                    ha="right" if left else "left", va="bottom", fontsize=9, bbox=box)
    elif plot.mark_label:
        ax.text(0.02, 0.04, plot.mark_label, transform=ax.transAxes, fontsize=9, ha="left", va="bottom", bbox=box)
    ax.legend(loc="best", fontsize=8, framealpha=0.9)
    ax.set_title(plot.title, fontsize=10)
    return _save(fig, path)


def _dodged(plot: PointsPlot, xs: list[float], i: int) -> list[float]:
    """Series ``i``'s xs nudged sideways when several series share the chart, so their
    whiskers at one x stay apart (drawing only: the data keep the measured xs)."""
    k = len(plot.series)
    if k < 2:
        return xs
    step = (i - (k - 1) / 2) * 0.025
    if plot.log_base is not None:
        return [x * plot.log_base ** step for x in xs]
    span = (max(xs) - min(xs)) if xs else 0.0
    return [x + step * max(span, 1.0) for x in xs]
