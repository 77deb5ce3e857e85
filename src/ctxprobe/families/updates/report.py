"""What ``updates`` adds to the reports: PI-LLM's curve (accuracy against ln U with the
fitted slope and its interval) and the per-key outcome counts (``stale`` among them), in
the JSON report under the family's label and as a section of the HTML page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.hooks import FamilyReportHooks
from ctxprobe.report.html.parts import PageSection, ReportSection, Table, page_section


def _num(x: float | None, fmt: str = "+.3f") -> str:
    return "–" if x is None else format(x, fmt)


class UpdatesHooks(FamilyReportHooks):
    def json_extra(self, records: Iterable[CaseRecord]) -> dict[str, Any] | None:
        from ctxprobe.families.updates.analysis import fit_records

        fits = fit_records(records)
        return {label: fit.to_dict() for label, fit in fits.items()} or None

    def html_data(self, records: Iterable[CaseRecord]) -> Any | None:
        return self.json_extra(records)

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        tables = []
        for run, fits in data.items():
            for label, fit in (fits or {}).items():
                lo, hi = fit["slope_95ci"]
                rows = [[str(p["updates"]), str(p["n"]), f"{p['accuracy']:.3f}",
                         ", ".join(f"{k} {v}" for k, v in p["key_outcomes"].items())] for p in fit["points"]]
                tables.append(Table(["updates per key", "cases", "accuracy", "key outcomes"], rows,
                                    caption=f"{run} · {label}: accuracy = {_num(fit['intercept'], '.3f')} "
                                            f"{_num(fit['slope_per_ln_updates'])} × ln U "
                                            f"(95% CI of the slope {_num(lo)} to {_num(hi)})"))
        if not tables:
            return None
        section = ReportSection("Update interference (PI-LLM)", tables,
                                "Accuracy against ln(updates per key), fitted by least squares; 'stale' counts keys "
                                "answered with a value they held before being overwritten.")
        return page_section("plugin_section.html.j2", [("updates-interference", section.title)],
                            anchor="updates-interference", s=section)


HOOKS = UpdatesHooks()
