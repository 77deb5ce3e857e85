"""What ``updates`` adds to the reports: PI-LLM's curve (accuracy against ln U with the
fitted slope and its interval) and the per-key outcome counts (``stale`` among them), in
the JSON report under the family's label and as a section of the HTML page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.html.label_tables import LabelTableHooks
from ctxprobe.report.html.parts import Table


def _num(x: float | None, fmt: str = "+.3f") -> str:
    return "–" if x is None else format(x, fmt)


class UpdatesHooks(LabelTableHooks):
    title = "Update interference (PI-LLM)"
    note = ("Accuracy against ln(updates per key), fitted by least squares; 'stale' counts keys answered with a "
            "value they held before being overwritten.")
    anchor = "updates-interference"

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        from ctxprobe.families.updates.analysis import fit_records

        return {label: fit.to_dict() for label, fit in fit_records(records).items()}

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        lo, hi = data["slope_95ci"]
        rows = [[str(p["updates"]), str(p["n"]), f"{p['accuracy']:.3f}",
                 ", ".join(f"{k} {v}" for k, v in p["key_outcomes"].items())] for p in data["points"]]
        return Table(["updates per key", "cases", "accuracy", "key outcomes"], rows,
                     caption=f"{run} · {label}: accuracy = {_num(data['intercept'], '.3f')} "
                             f"{_num(data['slope_per_ln_updates'])} × ln U "
                             f"(95% CI of the slope {_num(lo)} to {_num(hi)})")


HOOKS = UpdatesHooks()
