"""What every task family provides: parameters, seeded case generation, strict scoring.

A family class is constructed with the build context (``tasks.base.BuildContext``: the
tokenizer, the haystack, the prompt layout) and is found by name in the registry
(:mod:`ctxprobe.core.registry`, group ``families``).
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.outcome import Scored


class Family(Protocol):
    name: str
    params_model: type[BaseModel]

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        """Build one case to its exact token budget. Deterministic in its arguments."""
        ...

    def score(self, case: Case, output: str) -> Scored:
        """Strict score of a model output. Reads only the case's answer fields."""
        ...
