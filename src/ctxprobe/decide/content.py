"""What a run's stored cases actually contained, per family and length, in every unit.

Lengths are in each model's own tokens, and tokenizers differ by tens of percent: two
models' "64K" are different amounts of the user's text. So every length is also measured
in the units of the text itself, from the prompts as stored: words (whitespace-separated)
and characters of every message's content, and entries for the phone book (the book's
size, from the case's facts). A length is described by the fewest and the most of each
unit among its cases: "the model clears the bar here" is then said of the fewest (every
case it cleared held at least that much), "the model fails here" of the most.

The run's cost is read here too: what the provider billed where it did, and the prompt
and output tokens the cost at list price is computed from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.core.records import CaseRecord

__all__ = ["UNITS", "Content", "RunTotals", "read_content"]

#: The units a decision can be made in.
UNITS = ("tokens", "words", "chars", "entries")


@dataclass
class Content:
    """One (family, length): the fewest and most of each unit among its stored cases."""

    length: int
    low: dict[str, int] = field(default_factory=dict)
    high: dict[str, int] = field(default_factory=dict)
    cases: int = 0

    def add(self, counts: dict[str, int]) -> None:
        self.cases += 1
        for unit, value in counts.items():
            self.low[unit] = min(self.low.get(unit, value), value)
            self.high[unit] = max(self.high.get(unit, value), value)


@dataclass
class RunTotals:
    """Tokens and money over a run's answered cases."""

    prompt_tokens: int = 0
    output_tokens: int = 0
    billed_usd: float = 0.0
    billed_responses: int = 0  # responses the provider reported a cost for
    responses: int = 0
    words: int = 0
    chars: int = 0


def _text(messages: Iterable[Mapping[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def read_content(records: Iterable[CaseRecord], token_sized: dict[str, bool],
                 ) -> tuple[dict[str, dict[int, Content]], RunTotals]:
    """Per family and length, the content of the stored cases; and the run's totals.

    ``token_sized[family]``: True when the family's lengths are token budgets (then a
    length's tokens are the length itself, the budget every case was built to)."""
    out: dict[str, dict[int, Content]] = {}
    totals = RunTotals()
    for rec in records:
        family, length = rec.family, rec.length
        text = _text(rec.messages or [])
        tokens = int(rec.token_count or 0)
        counts = {"tokens": length if token_sized.get(family, True) else tokens,
                  "words": len(text.split()), "chars": len(text)}
        entries = (rec.meta or {}).get("entries")
        if isinstance(entries, int):
            counts["entries"] = entries
        out.setdefault(family, {}).setdefault(length, Content(length)).add(counts)
        if rec.outcome is not None and rec.outcome != "error":
            totals.responses += 1
            totals.prompt_tokens += int(rec.reported_prompt_tokens or tokens)
            totals.output_tokens += int(rec.completion_tokens or 0)
            totals.words += counts["words"]
            totals.chars += counts["chars"]
            if rec.cost_usd is not None:
                totals.billed_usd += float(rec.cost_usd)
                totals.billed_responses += 1
    return out, totals
