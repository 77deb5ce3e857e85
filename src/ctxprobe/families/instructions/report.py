"""What ``instructions`` adds to the reports: IFEval's accuracies per instruction count and
the instruction capacity, in the JSON report under the family's label and as a section of
the HTML page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.html.label_tables import LabelTableHooks
from ctxprobe.report.html.parts import Table


def headline(d: Mapping[str, Any]) -> str:
    cap = d["instruction_capacity"]
    return (f"instruction capacity {cap if cap is not None else 'below the smallest count'} "
            f"(prompt-level strict ≥ {d['threshold']})")


class InstructionsHooks(LabelTableHooks):
    title = "Instructions under load (IFEval)"
    note = "IFEval's accuracies by number of instructions in the system prompt."
    anchor = "instructions-load"

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        from ctxprobe.families.instructions.analysis import by_count, to_dict

        return {label: to_dict(points) for label, points in by_count(records).items()}

    def at_bars(self, extra: Any, bars: Mapping[str, float]) -> Any:
        from ctxprobe.families.instructions.analysis import at_bars

        return at_bars(extra, bars)

    def terminal_lines(self, extra: Mapping[str, Any]) -> list[str]:
        lines = []
        for label, d in extra.items():
            lines.append(f"{label}: {headline(d)}")
            lines.append("  by instruction count: " + "; ".join(
                f"{p['instructions']}: prompt strict {p['prompt_level_strict_acc']:.2f} "
                "[{:.2f}–{:.2f}] / loose {:.2f}, instruction strict {:.2f} / loose {:.2f} ({} cases)".format(
                    *p["prompt_level_strict_95ci"], p["prompt_level_loose_acc"], p["inst_level_strict_acc"],
                    p["inst_level_loose_acc"], p["n"]) for p in d["points"]))
        return lines

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        rows = [[str(p["instructions"]), str(p["n"]), f"{p['inst_level_strict_acc']:.3f}",
                 f"{p['inst_level_loose_acc']:.3f}", f"{p['prompt_level_strict_acc']:.3f}",
                 "{:.2f}–{:.2f}".format(*p["prompt_level_strict_95ci"]), f"{p['prompt_level_loose_acc']:.3f}"]
                for p in data["points"]]
        return Table(["instructions", "cases", "inst strict", "inst loose", "prompt strict", "95% CI",
                      "prompt loose"], rows, caption=f"{run} · {label}: {headline(data)}")


HOOKS = InstructionsHooks()
