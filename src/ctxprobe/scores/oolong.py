"""Oolong's scoring rules (``abertsch72/oolong``, ``src/eval/eval_helpers.py``), ported line
for line.

``oolong-synth`` (``synth_process_response``): the reply is cut to what follows its last
``:`` (stars and square brackets removed; a reply without ``:`` is kept whole when under 20
characters, else its last word), and scores 1 when it equals the gold answer as text (the
first element of the ``answer`` field's Python list, or the date of a
``[datetime.date(Y, M, D)]`` answer). Otherwise: a ``more common`` / ``less common`` /
``same frequency`` reply scores 1 when it occurs in the gold; a ``NUMERIC`` answer scores
``0.75 ** |gold - reply|`` when the reply reads as a Python ``int``; a ``DATE`` answer
scores 1 when ``dateutil`` parses the reply to the gold date; anything else 0.

``oolong-real`` (``dnd_process_response``): the reply's ``\\boxed{\\text{...}}`` (or
``\\boxed{...}``) is read as an ``int``, else a comma-separated list, else a string (a reply
without a box is kept whole, as a string); an ``int`` gold scores ``0.75 ** |error|``, a
string gold 1 when equal after stripping and lowercasing, a list gold the share of its items
found in the reply's list (``|set(gold) & set(reply)| / len(gold)``); a reply of another
kind than the gold scores 0.
"""

from __future__ import annotations

import ast
import re
from datetime import datetime
from typing import Any

from ctxprobe.core.outcome import Outcome, Scored

COMPARISONS = ("more common", "less common", "same frequency")
_DATE_GOLD = "[datetime.date(%Y, %m, %d)]"
_BOXED_TEXT = re.compile(r"\\boxed\{\\text\{([^}]*)\}\}")
_BOXED = re.compile(r"\\boxed[\{]+([^}]*)[\}]+")


def synth_parse(answer: str) -> tuple[str, str]:
    """``synth_attempt_answer_parse``: (the answer read from a reply, parse confidence)."""
    confidence = "low"
    if ":" not in answer:
        if len(answer) < 20:
            return answer, confidence
        return answer.split()[-1], confidence
    candidate = answer.split(":")[-1].strip().replace("*", "").replace("[", "").replace("]", "")
    confidence = "med"
    if "User:" in answer or "Answer:" in answer or "Date:" in answer or "Label" in answer:
        confidence = "high"
    if len(candidate) < 20:
        confidence = "vhigh"
    elif "more common" in candidate:
        candidate = "more common"
    elif "less common" in candidate:
        candidate = "less common"
    elif "same frequency" in candidate:
        candidate = "same frequency"
    return candidate, confidence


def synth_gold(answer: str) -> Any:
    """The gold answer of an ``answer`` field: a date for ``[datetime.date(...)]``, else the
    first element of the Python literal list."""
    if "datetime" not in answer:
        return ast.literal_eval(answer)[0]
    return datetime.strptime(answer, _DATE_GOLD)


def check_synth_answer(answer: Any) -> str | None:
    """Why an ``answer`` field cannot be read as Oolong-synth's (None when it can)."""
    if not isinstance(answer, str):
        return f"answer {answer!r} is not a string"
    try:
        synth_gold(answer)
    except (ValueError, SyntaxError, TypeError, IndexError, KeyError, MemoryError, RecursionError):
        return f"answer {answer!r} is neither a Python list nor [datetime.date(Y, M, D)]"
    return None


def _parse_date(text: str) -> Any:
    from dateutil import parser  # type: ignore[import-untyped,unused-ignore]  # a core dependency

    return parser.parse(text)


def synth_score(answer: str, answer_type: str, output: str) -> tuple[float, Any, str]:
    """``synth_process_response``'s score: (score, the answer read, parse confidence)."""
    gold = synth_gold(answer)
    trimmed: Any
    trimmed, confidence = synth_parse(output)
    score: float = 0.0
    if str(trimmed) == str(gold):
        score = 1.0
    elif str(trimmed) in COMPARISONS:
        if str(trimmed) in str(gold):
            score = 1.0
    elif answer_type == "ANSWER_TYPE.NUMERIC":
        try:
            trimmed = int(trimmed)
            gold = int(gold)
            score = 0.75 ** abs(gold - trimmed)
        except Exception:
            confidence = "low"
    elif answer_type == "ANSWER_TYPE.DATE":
        try:
            trimmed = _parse_date(trimmed)
            score = float(trimmed == gold)
        except Exception:
            confidence = "low"
    return score, trimmed, confidence


def dnd_parse_answer(answer: Any) -> int | str | list[str]:
    """``dnd_parse_answer``: an int, else a comma-separated list, else the string."""
    try:
        return int(answer)
    except ValueError:
        pass
    if "," in answer:
        return [item.strip() for item in answer.split(",") if item.strip()]
    return str(answer)


def dnd_parse_response(output: str) -> tuple[int | str | list[str], str]:
    """``dnd_parse_response``: the boxed answer, parsed (the whole reply when nothing is boxed)."""
    m = _BOXED_TEXT.search(output) or _BOXED.search(output)
    if not m:
        return output, "low"
    return dnd_parse_answer(m.group(1)), "high"


def dnd_score(answer: Any, output: str) -> tuple[float, Any, str]:
    """``dnd_process_response``'s score: (score, the answer read, parse confidence)."""
    gold = dnd_parse_answer(answer)
    trimmed, confidence = dnd_parse_response(output)
    score = 0.0
    if isinstance(gold, int) and isinstance(trimmed, int):
        score = 0.75 ** abs(gold - trimmed)
    elif isinstance(gold, str) and isinstance(trimmed, str):
        score = float(gold.strip().lower() == trimmed.strip().lower())
    elif isinstance(gold, list) and isinstance(trimmed, list):
        score = len(set(gold) & set(trimmed)) / len(gold) if gold else 0.0
    return score, trimmed, confidence


def oolong_scored(rule: str, answer: str, answer_type: str | None, output: str) -> Scored:
    """A reply scored by Oolong's rule, labelled: 1 correct, 0 wrong, between partial."""
    if rule == "oolong-synth":
        score, read, confidence = synth_score(answer, answer_type or "", output)
    else:
        score, read, confidence = dnd_score(answer, output)
    detail = {"rule": rule, "attempted_parse": str(read), "parse_confidence": confidence}
    if score <= 0.0 and not output.strip():
        return Scored(0.0, Outcome.EMPTY, detail)
    outcome = Outcome.CORRECT if score >= 1.0 else Outcome.WRONG if score <= 0.0 else Outcome.PARTIAL
    return Scored(float(score), outcome, detail)
