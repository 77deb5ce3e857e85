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


def equation(fit: Mapping[str, Any]) -> str:
    lo, hi = fit["slope_95ci"]
    return (f"accuracy = {_num(fit['intercept'], '.3f')} {_num(fit['slope_per_ln_updates'])} × ln U "
            f"(95% CI of the slope {_num(lo)} to {_num(hi)})")


class UpdatesHooks(LabelTableHooks):
    title = "Update interference (PI-LLM)"
    note = ("Accuracy against ln(updates per key), fitted by least squares; 'stale' counts keys answered with a "
            "value they held before being overwritten.")
    anchor = "updates-interference"

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        from ctxprobe.families.updates.analysis import fit_records

        return {label: fit.to_dict() for label, fit in fit_records(records).items()}

    def terminal_lines(self, extra: Mapping[str, Any]) -> list[str]:
        lines = []
        for label, fit in extra.items():
            lines.append(f"{label}: PI-LLM's curve, {equation(fit)}")
            lines.append("  by updates per key U: " + "; ".join(
                f"{p['updates']}: {p['accuracy']:.2f} ({p['n']} cases; {p['key_outcomes'].get('stale', 0)} of "
                f"{sum(p['key_outcomes'].values())} keys stale)" for p in fit["points"]))
        return lines

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        rows = [[str(p["updates"]), str(p["n"]), f"{p['accuracy']:.3f}",
                 ", ".join(f"{k} {v}" for k, v in p["key_outcomes"].items())] for p in data["points"]]
        return Table(["updates per key", "cases", "accuracy", "key outcomes"], rows,
                     caption=f"{run} · {label}: {equation(data)}")


HOOKS = UpdatesHooks()
