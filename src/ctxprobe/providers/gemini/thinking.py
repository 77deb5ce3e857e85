"""Which thinking budgets each Gemini model takes, per Google's thinking guide
(https://ai.google.dev/gemini-api/docs/thinking, "Set budgets" and "Thinking levels"):

| model | thinking_budget | 0 turns thinking off |
|---|---|---|
| Gemini 2.5 Pro | 128 to 32,768 | no |
| Gemini 2.5 Flash | 0 to 24,576 | yes |
| Gemini 2.5 Flash-Lite | 512 to 24,576 | yes |
| Gemini 3 (Pro, Flash) | taken for compatibility: ``thinking_level`` (MINIMAL…HIGH) is sent | no: 3 Pro cannot turn thinking off, 3 Flash's lowest level may still think |
| Gemini 2.0, 1.5, Gemma | no thinking | (a plain request) |

A model this table does not know is sent any budget: whether it takes it is the API's
to say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ThinkingRange:
    thinks: bool
    low: int = 1  # the smallest budget above 0 it takes
    high: int | None = None  # the largest, when the guide gives one
    can_turn_off: bool = True
    why_not_off: str = ""
    levels: bool = False  # thinking_level is the control (Gemini 3), not thinking_budget


_NO_THINKING = ThinkingRange(thinks=False)
_UNKNOWN = ThinkingRange(thinks=True)

#: Checked in order: the first pattern that matches the model name decides.
_RANGES: tuple[tuple[re.Pattern[str], ThinkingRange], ...] = (
    (re.compile(r"gemini-2\.5-pro"), ThinkingRange(True, 128, 32_768, False, "Gemini 2.5 Pro cannot turn thinking off")),
    (re.compile(r"gemini-2\.5-flash-lite"), ThinkingRange(True, 512, 24_576)),
    (re.compile(r"gemini-2\.5-flash"), ThinkingRange(True, 1, 24_576)),
    (re.compile(r"gemini-3(\.\d+)?-.*pro"), ThinkingRange(True, can_turn_off=False, levels=True,
                                                          why_not_off="Gemini 3 Pro cannot turn thinking off")),
    (re.compile(r"gemini-3(\.\d+)?-"), ThinkingRange(
        True, can_turn_off=False, levels=True,
        why_not_off="Gemini 3 models cannot turn thinking off (the lowest level, 'minimal', may still think)")),
    (re.compile(r"gemini-(1\.\d|2\.0)|gemma-"), _NO_THINKING),
)


def thinking_range(model: str) -> ThinkingRange:
    name = model.lower().split("/")[-1]
    for pattern, found in _RANGES:
        if pattern.match(name):
            return found
    return _UNKNOWN


def refusal(name: str, model: str, budget: int) -> str | None:
    """Why ``model`` (written ``name``) cannot be sent reasoning budget ``budget``, in
    one line, or None when it can."""
    rules = thinking_range(model)
    if not rules.thinks:
        return None if budget == 0 else (
            f"{name} does not think, so a reasoning budget of {budget:,} tokens would change nothing: "
            "give --reasoning-budgets 0 or drop the flag")
    if budget == 0:
        return None if rules.can_turn_off else (
            f"{name}: {rules.why_not_off}, so budget 0 cannot be sent: start --reasoning-budgets above 0 "
            f"(at least {rules.low:,})")
    if budget < rules.low or (rules.high is not None and budget > rules.high):
        top = f"{rules.high:,}" if rules.high is not None else "its maximum"
        return (f"{name}: a reasoning budget of {budget:,} tokens is outside what the model takes "
                f"({rules.low:,} to {top}): choose budgets in that range")
    return None
