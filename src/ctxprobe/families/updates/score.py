"""Scoring ``updates``: each key's answered value against its final one, as PI-LLM reads
an answer (its ``extract_pieces_response_to_dict``: the verbal ``The current value of KEY
is VALUE`` first, a ``KEY: VALUE`` colon form otherwise; the last statement of a key wins).

Per key the outcome is ``correct`` (the final value), ``stale`` (a value the key held
before: proactive interference), ``distractor`` (another key's value), ``wrong`` (any
other value) or ``not_found`` (no value for the key). Values are compared as whole numbers:
a value inside a longer number is not that value. The case's score is the share of keys
correct; its outcome ``correct`` when all are, ``partial`` when some are, else the first of
``stale``, ``distractor``, ``wrong``, ``not_found`` that some key has (``empty`` for an
empty reply). The per-key verdicts are in ``detail["keys"]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ctxprobe.core.outcome import Outcome, Scored

_ORDER = (Outcome.STALE, Outcome.DISTRACTOR, Outcome.WRONG, Outcome.NOT_FOUND)


def answered_value(output: str, key: str) -> str | None:
    """The value the reply gives ``key``, or None (see the module docstring)."""
    text = output.replace("*", "").replace("\\", "")
    k = re.escape(key)
    verbal = re.findall(rf"(?i)\bvalue\s+(?:of|for)\s+['\"]?{k}['\"]?\s+(?:is|was)\s*:?\s*['\"]?(\d+)(?!\d)", text)
    if verbal:
        return str(verbal[-1])
    colon = re.findall(rf"(?i)(?<![\w-])['\"]?{k}['\"]?\s*[:=-]\s*['\"]?(\d+)(?!\d)", text)
    return str(colon[-1]) if colon else None


def key_outcome(answer: str | None, values: Sequence[str], others: set[str]) -> Outcome:
    if answer is None:
        return Outcome.NOT_FOUND
    if answer == values[-1]:
        return Outcome.CORRECT
    if answer in values[:-1]:
        return Outcome.STALE
    return Outcome.DISTRACTOR if answer in others else Outcome.WRONG


def score_updates(keys: Sequence[str], history: Mapping[str, Sequence[str]], output: str) -> Scored:
    per_key: list[dict[str, object]] = []
    for key in keys:
        values = list(history[key])
        others = {v for other, vals in history.items() if other != key for v in vals}
        got = answered_value(output, key)
        outcome = key_outcome(got, values, others)
        item: dict[str, object] = {"key": key, "expected": values[-1], "answered": got, "outcome": str(outcome)}
        if outcome == Outcome.STALE and got is not None:
            item["updates_back"] = len(values) - 1 - max(i for i, v in enumerate(values) if v == got)
        per_key.append(item)
    n_ok = sum(item["outcome"] == Outcome.CORRECT for item in per_key)
    outcomes = {str(item["outcome"]) for item in per_key}
    if n_ok == len(per_key):
        label: Outcome = Outcome.CORRECT
    elif n_ok:
        label = Outcome.PARTIAL
    elif not output.strip():
        label = Outcome.EMPTY
    else:
        label = next(o for o in _ORDER if o in outcomes)
    counts = {o: sum(item["outcome"] == o for item in per_key) for o in sorted(outcomes)}
    return Scored(n_ok / len(per_key), label, {"keys": per_key, "key_outcomes": counts})
