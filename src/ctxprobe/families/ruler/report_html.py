"""The HTML report's RULER section: RULER's headline for each run of RULER's tasks (task
scores per length as RULER computes them, their average, the effective length under
RULER's rule), beside ctxprobe's strict profiles shown elsewhere on the page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxprobe.families.ruler.analysis import RulerHeadline
from ctxprobe.report.format import fmt_tokens
from ctxprobe.report.html.parts import PageSection, Table, page_section


def ruler_section(runs: Sequence[tuple[str, RulerHeadline]]) -> PageSection | None:
    """The section of the runs' RULER headlines (run label, headline); None without any."""
    found = ruler_runs(runs)
    return page_section("ctxprobe.families.ruler:report.html.j2", [("ruler", "RULER")], ruler=found) if found else None


def ruler_runs(runs: Sequence[tuple[str, RulerHeadline]]) -> list[dict[str, Any]]:
    """One entry per run with a RULER headline."""
    out = []
    for label, h in runs:
        rows: list[list[Any]] = [[task, *(f"{h.scores[task][L]:.2f}" if L in h.scores[task] else "—"
                                          for L in h.lengths)] for task in h.tasks]
        rows.append(["average", *(f"{h.average[L]:.2f}" for L in h.lengths)])
        out.append({
            "label": label,
            "table": Table(["task", *(fmt_tokens(L) for L in h.lengths)], rows,
                           caption="RULER's scores (string_match, mean × 100, 2 places)"),
            "bar": f"{h.bar:g}",
            "effective": fmt_tokens(h.effective_length) if h.effective_length is not None else "none",
            "missing": f" Not measured: {', '.join(h.missing)}." if h.missing else "",
        })
    return out
