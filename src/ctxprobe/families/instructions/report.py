"""What ``instructions`` adds to the reports: IFEval's accuracies per instruction count and
the instruction capacity, in the JSON report under the family's label and as a section of
the HTML page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.hooks import FamilyReportHooks
from ctxprobe.report.html.parts import PageSection, ReportSection, Table, page_section


class InstructionsHooks(FamilyReportHooks):
    def json_extra(self, records: Iterable[CaseRecord]) -> dict[str, Any] | None:
        from ctxprobe.families.instructions.analysis import by_count, to_dict

        return {label: to_dict(points) for label, points in by_count(records).items()} or None

    def html_data(self, records: Iterable[CaseRecord]) -> Any | None:
        return self.json_extra(records)

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        tables = []
        for run, labels in data.items():
            for label, d in (labels or {}).items():
                rows = [[str(p["instructions"]), str(p["n"]), f"{p['inst_level_strict_acc']:.3f}",
                         f"{p['inst_level_loose_acc']:.3f}", f"{p['prompt_level_strict_acc']:.3f}",
                         "{:.2f}–{:.2f}".format(*p["prompt_level_strict_95ci"]), f"{p['prompt_level_loose_acc']:.3f}"]
                        for p in d["points"]]
                cap = d["instruction_capacity"]
                tables.append(Table(["instructions", "cases", "inst strict", "inst loose", "prompt strict", "95% CI",
                                     "prompt loose"], rows,
                                    caption=f"{run} · {label}: instruction capacity "
                                            f"{cap if cap is not None else 'below the smallest count'} "
                                            f"(prompt-level strict ≥ {d['threshold']})"))
        if not tables:
            return None
        section = ReportSection("Instructions under load (IFEval)", tables,
                                "IFEval's accuracies by number of instructions in the system prompt.")
        return page_section("plugin_section.html.j2", [("instructions-load", section.title)],
                            anchor="instructions-load", s=section)


HOOKS = InstructionsHooks()
