"""What ``longout`` adds to the reports: F1 per answer length and the *output* effective
length (beside the input one of the generic report), in the JSON report under the
family's label and as a section of the HTML page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.hooks import FamilyReportHooks
from ctxprobe.report.html.parts import PageSection, ReportSection, Table, page_section


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


class LongoutHooks(FamilyReportHooks):
    def json_extra(self, records: Iterable[CaseRecord]) -> dict[str, Any] | None:
        from ctxprobe.families.longout.analysis import by_level, to_dict

        return {label: to_dict(points) for label, points in by_level(records).items()} or None

    def html_data(self, records: Iterable[CaseRecord]) -> Any | None:
        return self.json_extra(records)

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        tables = []
        for run, labels in data.items():
            for label, d in (labels or {}).items():
                rows = [[str(p["answer_level"]), f"{p['answer_tokens']:.0f}", str(p["n"]), str(p["output_truncated"]),
                         _f(p["f1"]), _f(p["order"])] for p in d["points"]]
                eff = d["output_effective_length"]
                tables.append(Table(["answer level", "answer tokens", "scored", "cut at limit", "F1", "order"], rows,
                                    caption=f"{run} · {label}: output effective length "
                                            f"{eff if eff is not None else 'below the shortest answer'} tokens "
                                            f"(mean F1 ≥ {d['threshold']})"))
        if not tables:
            return None
        section = ReportSection("Long outputs (LongProc HTML→TSV)", tables,
                                "Row-level F1 (LongProc's rule) by answer length; replies cut at the output limit "
                                "are not scored.")
        return page_section("plugin_section.html.j2", [("longout-output", section.title)],
                            anchor="longout-output", s=section)


HOOKS = LongoutHooks()
