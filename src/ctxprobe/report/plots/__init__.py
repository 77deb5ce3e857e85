"""PNG plots of a profile: a length × depth heatmap and an accuracy-vs-length curve.

matplotlib is an optional extra (``ctxprobe[plot]``), imported inside each function so
importing the report package costs nothing without it. The colour scale is fixed at
0 → 1 on every plot: two heatmaps side by side must mean the same thing by the same
colour, which an auto-scaled colour bar would break.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ctxprobe.analysis.grid import Profile
from ctxprobe.errors import MissingExtraError
from ctxprobe.report.format import (
    effective_length_line,
    fmt_depth,
    fmt_threshold,
    fmt_tokens,
)

_FIGSIZE = (7.0, 4.5)
_DPI = 120


def can_plot() -> bool:
    """Whether matplotlib is installed (``ctxprobe[plot]``); without it the reports have no PNGs."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def _pyplot() -> Any:
    """matplotlib.pyplot on the non-interactive Agg backend, or a one-line install hint."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtraError("matplotlib", "plot", "PNG plots") from exc
    matplotlib.use("Agg")  # never open a window, works on headless servers
    import matplotlib.pyplot as plt

    return plt


def _title(profile: Profile, title: str) -> str:
    return f"{title} · {profile.family}" if title else profile.family


def fit_titles(fig: Any) -> None:
    """Wrap every axes title (and the figure's) that is wider than the figure onto more lines,
    so a long model name or caption is not cut off at the PNG's edge."""
    import textwrap

    renderer = fig.canvas.get_renderer()
    avail = fig.bbox.width * 0.96
    titles = [ax.title for ax in fig.axes] + ([fig._suptitle] if getattr(fig, "_suptitle", None) else [])
    for title in titles:
        text = title.get_text()
        width = title.get_window_extent(renderer).width
        if not text or width <= avail:
            continue
        chars = max(10, int(len(text) * avail / width) - 1)
        title.set_text("\n".join(textwrap.wrap(" ".join(text.split()), chars, break_on_hyphens=False)))


def _save(fig: Any, path: str | Path, metadata: dict[str, str] | None = None) -> Path:
    """Write ``fig`` as a PNG (``metadata``: its text chunks, e.g. what it draws) and close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fit_titles(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI, metadata=metadata)
    import matplotlib.pyplot as plt

    plt.close(fig)  # plots are made in loops over families; do not leak figures
    return path


def _trained_row(lengths: list[int], trained: int | None) -> int | None:
    """Index of the last row inside the trained window when a later row lies past it."""
    if not trained or not lengths or lengths[-1] <= trained:
        return None
    inside = [i for i, n in enumerate(lengths) if n <= trained]
    return inside[-1] if inside else -1


def heatmap_png(profile: Profile, path: str | Path, title: str = "", trained_context: int | None = None) -> Path:
    """Length (rows, shortest on top like the table) × depth (columns) accuracy heatmap.

    ``title`` is typically the model name; the family is added to it. Cells without a
    scored case are grey and say "n/a". A dashed line under the effective-length row
    shows where the verdict stops; a blue line under the last row inside the model's
    ``trained_context`` marks where the rows past its training begin.
    """
    plt = _pyplot()
    import numpy as np

    lengths = sorted(s.length for s in profile.lengths)
    depths = profile.depths
    grid = np.full((len(lengths), len(depths)), np.nan)
    for cell in profile.cells:
        if cell.mean is not None:
            grid[lengths.index(cell.length), depths.index(cell.depth)] = cell.mean

    fig, ax = plt.subplots(figsize=_FIGSIZE)
    cmap = plt.get_cmap("RdYlGn").with_extremes(bad="#d9d9d9")
    image = ax.imshow(
        np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto"
    )

    # Annotations shrink with the grid so a 12 × 11 sweep stays legible.
    fontsize = max(6.0, min(10.0, 60.0 / max(len(depths), len(lengths), 1) + 3))
    for i in range(len(lengths)):
        for j in range(len(depths)):
            value = grid[i, j]
            if math.isnan(value):
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=fontsize, color="#555")
                continue
            # Dark text on the light middle of RdYlGn, white on its saturated ends.
            colour = "white" if value < 0.2 or value > 0.85 else "black"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center",
                    fontsize=fontsize, color=colour)

    ax.set_xticks(range(len(depths)), [fmt_depth(d) for d in depths])
    ax.set_yticks(range(len(lengths)), [fmt_tokens(n) for n in lengths])
    ax.set_xlabel("evidence depth (0% = start of context)")
    ax.set_ylabel("context length (tokens)")
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    # Thin white grid between cells so neighbouring equal colours stay separate cells.
    ax.set_xticks([x - 0.5 for x in range(1, len(depths))], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, len(lengths))], minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)

    if profile.effective_length is not None and profile.effective_length != lengths[-1]:
        row = lengths.index(profile.effective_length)
        ax.axhline(row + 0.5, color="black", linewidth=2, linestyle="--")

    trained_row = _trained_row(lengths, trained_context)
    if trained_row is not None:
        ax.axhline(trained_row + 0.5, color="tab:blue", linewidth=2.5, linestyle="-.")
        ax.annotate(f"trained window {fmt_tokens(trained_context or 0)}", xy=(len(depths) - 0.5, trained_row + 0.5),
                    xytext=(-3, 3), textcoords="offset points", ha="right", va="bottom", fontsize=8,
                    color="tab:blue", bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.8})

    bar = fig.colorbar(image, ax=ax, fraction=0.05, pad=0.03)
    bar.set_label("accuracy")
    ax.set_title(f"{_title(profile, title)}\n{effective_length_line(profile)}", fontsize=10)
    return _save(fig, path)


def curve_png(profile: Profile, path: str | Path, title: str = "", trained_context: int | None = None) -> Path:
    """Accuracy (pooled over depths) vs length on a log2 axis, with the Wilson 95% band.

    The threshold is a dashed horizontal line; the effective length a vertical one. A
    length with no scored case leaves a gap in the line rather than a fake zero. The
    model's ``trained_context``, when lengths reach past it, is a shaded region beyond a
    blue dash-dot line.
    """
    plt = _pyplot()

    stats = sorted(profile.lengths, key=lambda s: s.length)
    xs = [s.length for s in stats]
    nan = float("nan")
    means = [s.mean if s.mean is not None else nan for s in stats]
    los = [s.lo if s.n else nan for s in stats]
    his = [s.hi if s.n else nan for s in stats]

    fig, ax = plt.subplots(figsize=_FIGSIZE)
    if not profile.verdicts:  # adaptively sampled: no fixed-n band (the walk's verdicts are in the report)
        ax.fill_between(xs, los, his, color="tab:blue", alpha=0.18, linewidth=0,
                        label="95% CI, clustered by case" if profile.sampled else "Wilson 95% CI")
    ax.plot(xs, means, color="tab:blue", marker="o", linewidth=2, markersize=6,
            label="mean accuracy (all depths)")
    ax.axhline(profile.threshold, color="tab:red", linestyle="--", linewidth=1.3,
               label=f"threshold {fmt_threshold(profile.threshold)}")

    for stat in stats:
        if stat.n == 0:  # say so, rather than let the gap look like a plotting glitch
            ax.annotate("no scored\ncases", (stat.length, 0.5), ha="center", va="center",
                        fontsize=8, color="grey")
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [fmt_tokens(x) for x in xs])
    ax.minorticks_off()  # log-axis minor ticks would add unlabeled clutter between lengths
    if xs:
        lo_x, hi_x = min(xs), max(xs)
        ax.set_xlim(lo_x / 2 ** 0.35, hi_x * 2 ** 0.35)
    ax.set_ylim(0.0, 1.05)
    if trained_context and xs and xs[-1] > trained_context:
        ax.axvline(trained_context, color="tab:blue", linestyle="-.", linewidth=1.3,
                   label=f"trained window {fmt_tokens(trained_context)}")
        ax.axvspan(trained_context, xs[-1] * 2 ** 0.35, color="tab:blue", alpha=0.06, linewidth=0)
    ax.set_xlabel("context length (tokens, log scale)")
    ax.set_ylabel("accuracy")
    ax.grid(True, axis="y", alpha=0.3)
    ax.grid(True, axis="x", alpha=0.15)

    eff = profile.effective_length
    if eff is not None:
        ax.axvline(eff, color="black", linestyle=":", linewidth=1.5)
        # At the longest length the label would run off the right edge: put it on the left.
        left = eff == xs[-1]
        ax.annotate(
            f"effective length {fmt_tokens(eff)}",
            xy=(eff, 0.04), xytext=(-5 if left else 5, 0), textcoords="offset points",
            ha="right" if left else "left", va="bottom", fontsize=9,
            bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "none", "alpha": 0.8},
        )
    else:
        ax.text(0.02, 0.04, effective_length_line(profile), transform=ax.transAxes,
                fontsize=9, ha="left", va="bottom",
                bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "none", "alpha": 0.8})

    ax.legend(loc="best", fontsize=8, framealpha=0.9)
    ax.set_title(f"{_title(profile, title)}: accuracy vs context length", fontsize=10)
    return _save(fig, path)
