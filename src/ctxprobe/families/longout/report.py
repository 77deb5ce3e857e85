"""What ``longout`` adds to the reports: F1 per answer length and the *output* effective
length (beside the input one of the generic report), in the JSON report under the
family's label and as a section of the HTML page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.html.label_tables import LabelTableHooks
from ctxprobe.report.html.parts import Table


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


class LongoutHooks(LabelTableHooks):
    title = "Long outputs (LongProc HTML→TSV)"
    note = "Row-level F1 (LongProc's rule) by answer length; replies cut at the output limit are not scored."
    anchor = "longout-output"

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        from ctxprobe.families.longout.analysis import by_level, to_dict

        return {label: to_dict(points) for label, points in by_level(records).items()}

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        rows = [[str(p["answer_level"]), f"{p['answer_tokens']:.0f}", str(p["n"]), str(p["output_truncated"]),
                 _f(p["f1"]), _f(p["order"])] for p in data["points"]]
        eff = data["output_effective_length"]
        return Table(["answer level", "answer tokens", "scored", "cut at limit", "F1", "order"], rows,
                     caption=f"{run} · {label}: output effective length "
                             f"{eff if eff is not None else 'below the shortest answer'} tokens "
                             f"(mean F1 ≥ {data['threshold']})")


HOOKS = LongoutHooks()
