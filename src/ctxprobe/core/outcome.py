"""The outcome taxonomy and a family's score.

Harness failures are never scored as model failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

class Outcome(str, Enum):
    """One label of the taxonomy. A member *is* its stored string: it compares, hashes,
    formats, serialises (JSON, SQLite) and prints as its plain value, so what is stored
    and reported is unchanged; ``Outcome(text)`` reads a stored value back."""

    CORRECT = "correct"
    WRONG = "wrong"
    DISTRACTOR = "distractor"
    #: A value the asked key held before it was overwritten (``updates``: proactive interference).
    STALE = "stale"
    PARTIAL = "partial"
    NOT_FOUND = "not_found"
    REFUSAL = "refusal"
    EMPTY = "empty"
    PARSE_ERROR = "parse_error"
    OUTPUT_TRUNCATED = "output_truncated"
    INPUT_TRUNCATED = "input_truncated"
    ERROR = "error"

    # str's, not Enum's: "error" and Outcome.ERROR are one set member and one dict key
    __hash__ = str.__hash__

    def __str__(self) -> str:  # Enum's would give "Outcome.ERROR"
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self.value, spec)


#: Every label a scored case can carry, in report order.
OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
#: Outcomes that say nothing about the model: excluded from accuracy.
HARNESS_OUTCOMES: frozenset[Outcome] = frozenset({Outcome.INPUT_TRUNCATED, Outcome.ERROR})
#: Misses that a reply cut at the output limit may owe to the cut (then ``output_truncated``).
CUT_MISSES: frozenset[Outcome] = frozenset({Outcome.WRONG, Outcome.EMPTY, Outcome.NOT_FOUND})


@dataclass
class Scored:
    score: float  # 0..1
    outcome: str  # taxonomy label: an Outcome (a str), or its stored value
    detail: dict[str, Any] = field(default_factory=dict)
