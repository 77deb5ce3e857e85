"""The outcome taxonomy and a family's score.

Harness failures are never scored as model failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Every label a scored case can carry, in report order.
OUTCOMES = (
    "correct",
    "wrong",
    "distractor",
    "partial",
    "not_found",
    "refusal",
    "empty",
    "parse_error",
    "output_truncated",
    "input_truncated",
    "error",
)
#: Outcomes that say nothing about the model: excluded from accuracy.
HARNESS_OUTCOMES = frozenset({"input_truncated", "error"})


@dataclass
class Scored:
    score: float  # 0..1
    outcome: str  # taxonomy label (OUTCOMES)
    detail: dict[str, Any] = field(default_factory=dict)
