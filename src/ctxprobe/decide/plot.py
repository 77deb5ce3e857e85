"""The Pareto plot of a decision: input price against effective length, per family.

Each run is a point at its observed effective length (in the decision's unit) and its
input price per 1M units for a prompt of that size; the bar through it is the
effective-length interval (95%), open to the right when its upper end is unknown. Runs
chosen for some band are drawn as stars and named with the bands they win; the step line
joins the runs no other run beats on both price and reliable length (the lower end).
matplotlib is imported only when a plot is drawn (the ``plot`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ctxprobe.decide.choose import price_at
from ctxprobe.report.plots import _pyplot, _save

if TYPE_CHECKING:
    from ctxprobe.decide.decision import Decision

__all__ = ["left_out", "pareto_points", "pareto_png"]


def pareto_points(d: Decision, family: str) -> list[tuple[str, int | None, int | None, int | None, float | None]]:
    """(model, lo, observed, hi, price per 1M at the observed length) of every run with ``family``."""
    out: list[tuple[str, int | None, int | None, int | None, float | None]] = []
    for r in d.runs:
        facts = r.families.get(family)
        if facts is None:
            continue
        iv = facts.interval
        at = iv.point if iv.point is not None else iv.lo
        point = facts.value(at, d.unit) if at is not None else None
        lo = facts.value(iv.lo, d.unit) if iv.lo is not None else None
        hi = facts.value(iv.hi, d.unit, high=iv.hi != iv.lo) if iv.hi is not None else None
        out.append((r.model, lo, point, hi, price_at(r, point or 1, d.unit, d.table)))
    return out


def left_out(d: Decision, family: str) -> list[str]:
    """The runs with ``family`` that the plot cannot place, each with why (said beside the
    plot, never dropped silently): no price (no height), or no observed effective length."""
    out = []
    for model, _lo, point, _hi, price in pareto_points(d, family):
        if point is None:
            out.append(f"{model} (below the shortest tested length)")
        elif price is None:
            out.append(f"{model} (no price per 1M {d.unit})")
    return out


def pareto_png(d: Decision, family: str, path: str | Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.0, 4.8))
    points = pareto_points(d, family)
    wins: dict[str, list[str]] = {}
    for c in d.choices:
        if c.family == family and c.choice is not None:
            wins.setdefault(c.choice.model, []).append(f"≤{_short(c.band, d.unit)}")
    shortest = min((p for _, lo, pt, hi, _ in points for p in (lo, pt, hi) if p), default=1)
    frontier: list[tuple[int, float]] = []
    for model, lo, point, hi, price in points:
        if price is None or point is None:
            continue
        x = point
        left = x - (lo if lo is not None else shortest / 2)
        right = (hi - x) if hi is not None and hi >= x else 0
        chosen = model in wins
        ax.errorbar([x], [price], xerr=[[max(left, 0)], [right]], fmt="*" if chosen else "o",
                    markersize=14 if chosen else 7, capsize=4, color="tab:orange" if chosen else "tab:blue")
        label = model if len(model) <= 40 else model[:37] + "..."
        if chosen:
            label += " (chosen " + ", ".join(wins[model]) + ")"
        ax.annotate(label, (x, price), textcoords="offset points", xytext=(6, 6), fontsize=8)
        if lo is not None:
            frontier.append((lo, price))
    best: list[tuple[int, float]] = []
    for lo, price in sorted(frontier, key=lambda t: (t[1], -t[0])):
        if not best or lo > best[-1][0]:
            best.append((lo, price))
    if len(best) > 1:
        ax.step([b[0] for b in best], [b[1] for b in best], where="post", color="grey", linestyle=":",
                label="cheapest for its reliable length")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(f"effective length ({d.unit}; bar: 95% interval)")
    ax.set_ylabel(f"input price, USD per 1M {d.unit}")
    ax.set_title(f"{family}: price against effective length")
    missing = left_out(d, family)
    if missing:
        fig.text(0.01, 0.01, "not plotted: " + "; ".join(missing), fontsize=7, wrap=True)
    ax.grid(True, alpha=0.3)
    return _save(fig, Path(path))


def _short(value: int, unit: str) -> str:
    from ctxprobe.decide.render import fmt_amount

    return fmt_amount(value, unit).replace(" tokens", "")
