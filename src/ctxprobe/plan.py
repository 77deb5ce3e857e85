"""The plan: the grid of cells × repetitions, in sending order, and what it will cost."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ctxprobe.spec import Spec
from ctxprobe.tasks.case import Cell, make_case_id


@dataclass(frozen=True)
class PlannedCase:
    cell: Cell
    rep: int

    @property
    def case_id(self) -> str:
        return make_case_id(self.cell, self.rep)


def planned_cases(spec: Spec) -> Iterator[PlannedCase]:
    """Lengths ascending; within a (length, repetition) group, depths from the end back to
    the start. Cases of a group share their filler, so each request shares with the one
    before it everything up to its own needle: a prefix cache (llama.cpp, vLLM, SGLang)
    recomputes only the tail."""
    for family in spec.families:
        for length in spec.lengths:
            for rep in range(spec.reps):
                for depth in sorted(spec.depths, reverse=True):
                    yield PlannedCase(Cell(family, length, depth), rep)


@dataclass(frozen=True)
class PlanSummary:
    requests: int
    input_tokens: int  # upper bound: every case is built to at most its target length
    max_output_tokens: int
    cells: int

    def lines(self) -> list[str]:
        return [
            f"{self.cells} cells, {self.requests} requests",
            f"input tokens ≤ {self.input_tokens:,} (each case is built to at most its target length)",
            f"output tokens ≤ {self.max_output_tokens:,}",
        ]


def summarize(spec: Spec) -> PlanSummary:
    per_rep = len(spec.depths) * spec.reps * len(spec.families)
    return PlanSummary(
        requests=len(spec.lengths) * per_rep,
        input_tokens=sum(spec.lengths) * per_rep,
        max_output_tokens=len(spec.lengths) * per_rep * spec.decoding.max_tokens,
        cells=len(spec.lengths) * len(spec.depths) * len(spec.families),
    )
