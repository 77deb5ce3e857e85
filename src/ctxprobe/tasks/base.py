"""What every task family provides: parameters, seeded case generation, strict scoring."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from ctxprobe.spec import PromptLayout
from ctxprobe.tasks.case import Case, Cell
from ctxprobe.tokenizers.base import Tokenizer


@dataclass
class Scored:
    score: float  # 0..1
    outcome: str  # taxonomy label (ctxprobe.tasks.case.OUTCOMES)
    detail: dict[str, Any] = field(default_factory=dict)


class Family(Protocol):
    name: str
    params_model: type[BaseModel]

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        """Build one case to its exact token budget. Deterministic in its arguments."""
        ...

    def score(self, case: Case, output: str) -> Scored:
        """Strict score of a model output. Reads only the case's answer fields."""
        ...


@dataclass(frozen=True)
class BuildContext:
    """What a family needs from outside to build cases."""

    tokenizer: Tokenizer
    haystack: str | None  # None: built-in prose; else a directory of the user's text
    layout: PromptLayout = field(default_factory=PromptLayout)  # instruction position, depth-0 separator


def derive_seed(*parts: object) -> int:
    """A stable 64-bit seed from any parts (never Python's salted ``hash``)."""
    blob = "/".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") >> 1  # fits SQLite INTEGER
