"""What ``instructions`` adds to the reports: IFEval's accuracies per instruction count and
the instruction capacity, in the JSON report under the family's label, as a section of
the HTML page, and drawn (:meth:`InstructionsHooks.plot_data`: instruction-level strict
accuracy against instruction count with its 95% interval, beside the prompt-level strict
accuracy the capacity is read from, the bar and the capacity marked) as
``<label>-by-instruction-count.png``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.html.label_tables import LabelTableHooks
from ctxprobe.report.html.parts import Table

if TYPE_CHECKING:
    from ctxprobe.report.plots.points import PointsPlot


def headline(d: Mapping[str, Any]) -> str:
    cap = d["instruction_capacity"]
    return (f"instruction capacity {cap if cap is not None else 'below the smallest count'} "
            f"(prompt-level strict ≥ {d['threshold']})")


class InstructionsHooks(LabelTableHooks):
    title = "Instructions under load (IFEval)"
    note = "IFEval's accuracies by number of instructions in the system prompt."
    anchor = "instructions-load"
    png_name = "by-instruction-count"
    points_title = "by instruction count"

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        from ctxprobe.families.instructions.analysis import by_count, to_dict

        return {label: to_dict(points) for label, points in by_count(records).items()}

    def at_bars(self, extra: Any, bars: Mapping[str, float]) -> Any:
        from ctxprobe.families.instructions.analysis import at_bars

        return at_bars(extra, bars)

    def label_headline(self, data: Mapping[str, Any]) -> str:
        return headline(data)

    def point_text(self, p: Mapping[str, Any]) -> str:
        return ("{}: prompt strict {:.2f} [{:.2f}–{:.2f}] / loose {:.2f}, instruction strict {:.2f} / loose {:.2f} "
                "({} cases)").format(p["instructions"], p["prompt_level_strict_acc"], *p["prompt_level_strict_95ci"],
                                     p["prompt_level_loose_acc"], p["inst_level_strict_acc"],
                                     p["inst_level_loose_acc"], p["n"])

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        rows = [[str(p["instructions"]), str(p["n"]), f"{p['inst_level_strict_acc']:.3f}",
                 f"{p['inst_level_loose_acc']:.3f}", f"{p['prompt_level_strict_acc']:.3f}",
                 "{:.2f}–{:.2f}".format(*p["prompt_level_strict_95ci"]), f"{p['prompt_level_loose_acc']:.3f}"]
                for p in data["points"]]
        return Table(["instructions", "cases", "inst strict", "inst loose", "prompt strict", "95% CI",
                      "prompt loose"], rows, caption=f"{run} · {label}: {headline(data)}")

    def plot_data(self, title: str, label: str, data: Mapping[str, Any]) -> PointsPlot:
        from ctxprobe.report.plots.points import PointsPlot, Series

        pts = data["points"]
        xs = [float(p["instructions"]) for p in pts]
        inst = Series("instruction-level strict (95% CI, clustered by prompt)", xs,
                      [p["inst_level_strict_acc"] for p in pts], [p["inst_level_strict_95ci"][0] for p in pts],
                      [p["inst_level_strict_95ci"][1] for p in pts])
        prompt = Series("prompt-level strict, the capacity's measure (Wilson 95% CI)", xs,
                        [p["prompt_level_strict_acc"] for p in pts], [p["prompt_level_strict_95ci"][0] for p in pts],
                        [p["prompt_level_strict_95ci"][1] for p in pts], colour="tab:orange", marker="s")
        cap = data["instruction_capacity"]
        mark = f"instruction capacity {cap}" if cap is not None else "instruction capacity: below the smallest count"
        return PointsPlot(f"{title} · {label}: {headline(data)}", "instructions in the system prompt",
                          "accuracy (IFEval, strict)", [inst, prompt], bar=float(data["threshold"]),
                          mark_x=None if cap is None else float(cap), mark_label=mark,
                          xticks=[(x, f"{x:g}") for x in xs])

    def caption(self, run: str, label: str, data: Mapping[str, Any]) -> str:
        return f"{run} · {label}: IFEval strict accuracy against instruction count, {headline(data)}"


HOOKS = InstructionsHooks()
