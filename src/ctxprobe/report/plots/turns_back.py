"""Accuracy against turns back as a PNG: per family label, the accuracy of the cases whose
evidence sat in each range of messages back (0, 1, 2, then doubling ranges), with its
Wilson 95% band, the bar, and how far back each label still clears it (matplotlib: the
``plot`` extra)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ctxprobe.analysis.turns_back import TurnsBackBin, TurnsBackReach, TurnsBackStat, turns_back_bins

__all__ = ["turns_back_png"]


def turns_back_png(stats: list[TurnsBackStat], reach: list[TurnsBackReach], path: str | Path,
                   title: str = "") -> Path:
    from ctxprobe.report.plots import _pyplot, fit_titles

    plt = _pyplot()
    by_family: dict[str, list[TurnsBackBin]] = defaultdict(list)
    for b in turns_back_bins(stats):
        by_family[b.family].append(b)
    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=120)
    ticks: dict[int, str] = {}
    for family, bins in by_family.items():
        xs = [b.hi for b in bins]  # each range drawn at its far end
        ticks.update({b.hi: b.label for b in bins})
        line, = ax.plot(xs, [b.mean for b in bins], marker="o", label=family)
        ax.fill_between(xs, [b.ci_lo for b in bins], [b.ci_hi for b in bins], alpha=0.15, color=line.get_color())
    bars = sorted({r.bar for r in reach})
    for bar in bars:
        ax.axhline(bar, color="grey", linestyle="--", label=f"bar {bar:g}")
    for r in reach:
        if r.reach is not None and r.first_below is not None:
            ax.axvline(r.reach, color="green", linestyle=":", alpha=0.6)
    ax.set_xscale("symlog", linthresh=1)
    xs = sorted(ticks)
    ax.set_xticks(xs, [ticks[x] for x in xs])
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("messages back (the evidence's message counted from the last)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{title} · accuracy by turns back" if title else "accuracy by turns back")
    ax.legend(loc="lower left", fontsize=8)
    fit_titles(fig)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out
