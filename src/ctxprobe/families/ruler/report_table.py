"""RULER's headline in the terminal: task × length scores as RULER prints them, the
average per length, and the effective length under RULER's rule — beside ctxprobe's own
strict profiles printed above it."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from ctxprobe.families.ruler.analysis import RulerHeadline
from ctxprobe.report.format import fmt_tokens


def render_ruler_headline(headline: RulerHeadline, out: Console, strict_effective: dict[str, Any] | None = None,
                          threshold: float | None = None) -> None:
    table = Table("task", *(fmt_tokens(L) for L in headline.lengths),
                  title="RULER headline: string_match, 0-100", title_justify="left")
    for task in headline.tasks:
        by = headline.scores[task]
        table.add_row(task, *(f"{by[L]:.2f}" if L in by else "—" for L in headline.lengths))
    table.add_section()
    table.add_row("average", *(f"{headline.average[L]:.2f}" for L in headline.lengths))
    out.print(table)
    eff = headline.effective_length
    verdict = fmt_tokens(eff) if eff is not None else "none (below the bar at the shortest length)"
    out.print(f"RULER effective length (average ≥ {headline.bar:g}): {verdict}", highlight=False)
    if strict_effective:
        ours = ", ".join(f"{t} {fmt_tokens(v) if v is not None else 'none'}" for t, v in strict_effective.items())
        bar = f"mean ≥ {threshold:g}" if threshold is not None else "the run's bar"
        out.print(f"ours (strict scorer, each task at {bar}): {ours}", highlight=False)
    if headline.missing:
        out.print(f"RULER averages 13 tasks; not measured here: {', '.join(headline.missing)}", highlight=False)
