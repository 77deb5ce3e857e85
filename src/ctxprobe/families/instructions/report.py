"""What ``instructions`` adds to the reports: IFEval's accuracies per instruction count and
the instruction capacity, in the JSON report under the family's label and as a section of
the HTML page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.html.label_tables import LabelTableHooks
from ctxprobe.report.html.parts import Table


class InstructionsHooks(LabelTableHooks):
    title = "Instructions under load (IFEval)"
    note = "IFEval's accuracies by number of instructions in the system prompt."
    anchor = "instructions-load"

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        from ctxprobe.families.instructions.analysis import by_count, to_dict

        return {label: to_dict(points) for label, points in by_count(records).items()}

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        rows = [[str(p["instructions"]), str(p["n"]), f"{p['inst_level_strict_acc']:.3f}",
                 f"{p['inst_level_loose_acc']:.3f}", f"{p['prompt_level_strict_acc']:.3f}",
                 "{:.2f}–{:.2f}".format(*p["prompt_level_strict_95ci"]), f"{p['prompt_level_loose_acc']:.3f}"]
                for p in data["points"]]
        cap = data["instruction_capacity"]
        return Table(["instructions", "cases", "inst strict", "inst loose", "prompt strict", "95% CI",
                      "prompt loose"], rows,
                     caption=f"{run} · {label}: instruction capacity "
                             f"{cap if cap is not None else 'below the smallest count'} "
                             f"(prompt-level strict ≥ {data['threshold']})")


HOOKS = InstructionsHooks()
