"""The distractor-tolerance curve as a PNG: accuracy against the number of look-alikes,
with its Wilson 95% band, the bar, and the tolerated count marked (matplotlib: the ``plot``
extra)."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.analysis.distractors import DistractorTolerance

__all__ = ["tolerance_png"]


def tolerance_png(tol: DistractorTolerance, path: str | Path, title: str = "") -> Path:
    from ctxprobe.report.plots import _pyplot, fit_titles

    plt = _pyplot()
    points = [p for p in tol.curve if p.mean is not None]
    xs = [p.count for p in points]
    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=120)
    ax.fill_between(xs, [p.lo for p in points], [p.hi for p in points], alpha=0.2, label="95% interval")
    ax.plot(xs, [p.mean for p in points], marker="o", label="accuracy")
    ax.axhline(tol.bar, color="grey", linestyle="--", label=f"bar {tol.bar:g}")
    if tol.lo is not None:
        ax.axvline(tol.lo, color="green", linestyle=":", label=f"tolerates up to {tol.lo}")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("look-alikes (same-form needles with other keys)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{title} · {tol.family} distractor tolerance" if title else f"{tol.family} distractor tolerance")
    ax.legend(loc="lower left", fontsize=8)
    fit_titles(fig)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out
