"""The HTML page's noise-floor table (``--baseline no-context``): per family, run and length,
the accuracy beside its guess rate and whether it is above it, with each family's verdict."""

from __future__ import annotations

from typing import Any

from ctxprobe.analysis.floor import KIND_WORDS, Floor
from ctxprobe.report.floor.table import verdict
from ctxprobe.report.format import fmt_tokens
from ctxprobe.report.html.parts import Cell, Table, score_cell, td
from ctxprobe.report.html.sections import RunView

NOTE = ("The floor is what the same questions score with their evidence removed (MRCR: the score of returning "
        "a random instance of the asked key). A length is above it when the accuracy's one-sided 97.5% lower "
        "bound exceeds the floor's one-sided 97.5% upper bound (Clopper–Pearson): a false “above” has at most "
        "5% probability at any sample size. An effective length stands above its floor when every length up to "
        "it is above.")


def floor_table(views: list[RunView]) -> dict[str, Any] | None:
    """The table and its note, or None when no run has a floor."""
    rows: list[list[str | Cell]] = []
    for v in views:
        found: dict[str, Floor] = v.report.floors
        for fam, floor in sorted(found.items()):
            stands = floor.stands
            colour = "#1a7a3c" if stands else "#b2182b"
            for i, x in enumerate(floor.lengths):
                rows.append([td(fam if i == 0 else ""), td(v.label if i == 0 else ""),
                             td(KIND_WORDS.get(floor.kind, floor.kind) if i == 0 else ""), td(fmt_tokens(x.length), "num"),
                             score_cell(x.mean, n=x.n), score_cell(x.floor_mean, x.floor_lo, x.floor_hi, x.floor_n),
                             td(verdict(x.above, floor.confidence)),
                             Cell(floor.line(), bold=colour) if i == 0 else td("")])
    if not rows:
        return None
    headers = ["family", "run", "floor", "length", "accuracy", "floor (guess rate)", "above floor", "verdict"]
    return {"table": Table(headers, rows, cls="floors"), "note": NOTE}
