"""Plots that put several profiles on one chart: all families of a run, or one family across runs.

The single-profile plots live in :mod:`ctxprobe.report.plots`; these reuse its Agg setup,
sizes and saving so every PNG of a report looks alike. Lines here must be told apart by
colour *and* marker (a grey-scale printout or a colour-blind reader still separates them),
so accuracy itself is read off the y axis, not off a colour scale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxprobe.analysis.grid import Profile
from ctxprobe.report.format import fmt_threshold, fmt_tokens
from ctxprobe.report.plots import _DPI, _pyplot, _save

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">")
_FIGSIZE_WIDE = (8.0, 4.8)


def _series(ax: Any, profile: Profile, label: str, colour: Any, marker: str, band: bool) -> list[int]:
    """One accuracy-vs-length line (gaps where nothing was scored); returns its x values."""
    stats = sorted(profile.lengths, key=lambda s: s.length)
    nan = float("nan")
    xs = [s.length for s in stats]
    means = [s.mean if s.mean is not None else nan for s in stats]
    if band and not profile.verdicts:  # adaptively sampled: no fixed-n band
        ax.fill_between(xs, [s.lo if s.n else nan for s in stats], [s.hi if s.n else nan for s in stats],
                        color=colour, alpha=0.12, linewidth=0)
    eff = profile.effective_length
    suffix = f" (eff. {fmt_tokens(eff)})" if eff is not None else " (eff. < shortest)"
    ax.plot(xs, means, color=colour, marker=marker, linewidth=2, markersize=6, label=label + suffix)
    if eff is not None:  # a ring around the point where this line's verdict stops
        at = next(s for s in stats if s.length == eff)
        ax.plot([eff], [at.mean], marker="o", markersize=14, markerfacecolor="none",
                markeredgecolor=colour, markeredgewidth=2)
    return xs


def _axes(ax: Any, xs: list[int], threshold: float | None) -> None:
    ticks = sorted(set(xs))
    if threshold is not None:
        ax.axhline(threshold, color="tab:red", linestyle="--", linewidth=1.3,
                   label=f"threshold {fmt_threshold(threshold)}")
    ax.set_xscale("log", base=2)
    if ticks:
        ax.set_xticks(ticks, [fmt_tokens(x) for x in ticks])
        ax.set_xlim(min(ticks) / 2 ** 0.35, max(ticks) * 2 ** 0.35)
    ax.minorticks_off()
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel("context length (tokens, log scale)")
    ax.set_ylabel("accuracy (all depths)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.grid(True, axis="x", alpha=0.15)
    ax.legend(loc="lower left", fontsize=8, framealpha=0.9)


def _common_threshold(profiles: list[Profile]) -> float | None:
    bars = {p.threshold for p in profiles}
    return bars.pop() if len(bars) == 1 else None


def all_families_png(profiles: list[Profile], path: str | Path, title: str = "") -> Path:
    """Every family's accuracy vs length on one chart, effective length ringed on each line.

    This is the "profile" picture: which abilities give out first as the context grows.
    Bands are the Wilson 95% intervals; with many families they are drawn lighter.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_FIGSIZE_WIDE, dpi=_DPI)
    cmap = plt.get_cmap("tab10")
    xs: list[int] = []
    for i, prof in enumerate(sorted(profiles, key=lambda p: p.family)):
        xs += _series(ax, prof, prof.family, cmap(i % 10), _MARKERS[i % len(_MARKERS)], band=len(profiles) <= 4)
    _axes(ax, xs, _common_threshold(profiles))
    ax.set_title(f"{title + ' · ' if title else ''}all families: accuracy vs context length", fontsize=10)
    return _save(fig, path)


def runs_curve_png(family: str, runs: list[tuple[str, Profile]], path: str | Path, title: str = "") -> Path:
    """One family across several runs (e.g. two quantisations, two serving stacks).

    ``runs`` pairs a label (model · run id) with that run's profile of ``family``.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_FIGSIZE_WIDE, dpi=_DPI)
    cmap = plt.get_cmap("tab10")
    xs: list[int] = []
    for i, (label, prof) in enumerate(runs):
        xs += _series(ax, prof, label, cmap(i % 10), _MARKERS[i % len(_MARKERS)], band=len(runs) <= 3)
    _axes(ax, xs, _common_threshold([p for _, p in runs]))
    ax.set_title(f"{title + ' · ' if title else ''}{family}: runs side by side", fontsize=10)
    return _save(fig, path)
