"""The HTML report's RULER section: RULER's headline for each run of RULER's tasks (task
scores per length as RULER computes them, their average, the effective length under
RULER's rule), beside ctxprobe's strict profiles shown elsewhere on the page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxprobe.report.format import fmt_tokens
from ctxprobe.report.html_parts import esc, table


def ruler_section(views: Sequence[Any]) -> str:
    """Empty when no run has a RULER headline."""
    parts = []
    for view in views:
        h = getattr(view.report, "ruler", None)
        if h is None:
            continue
        rows = [[task, *(f"{h.scores[task][L]:.2f}" if L in h.scores[task] else "—" for L in h.lengths)]
                for task in h.tasks]
        rows.append(["average", *(f"{h.average[L]:.2f}" for L in h.lengths)])
        eff = fmt_tokens(h.effective_length) if h.effective_length is not None else "none"
        missing = f" Not measured: {', '.join(h.missing)}." if h.missing else ""
        parts.append(f"<h3>{esc(view.label)}</h3>"
                     + table(["task", *(fmt_tokens(L) for L in h.lengths)], rows,
                             caption="RULER's scores (string_match, mean × 100, 2 places)")
                     + f"<p>RULER effective length (average ≥ {h.bar:g}): <b>{esc(eff)}</b>.{esc(missing)}</p>")
    if not parts:
        return ""
    return ('<section id="ruler"><h2>RULER headline</h2><p class="sub">RULER\'s own scorer and rule, beside '
            "ctxprobe's strict profiles above.</p>" + "".join(parts) + "</section>")
