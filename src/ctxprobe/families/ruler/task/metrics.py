"""RULER's scorers, as in ``scripts/eval/synthetic/constants.py`` and ``eval/evaluate.py``.

``postprocess_pred`` strips the prediction and turns control characters into newlines;
:func:`string_match_all` is the share of references found (case-insensitive substring),
:func:`string_match_part` is 1 if any is. Per-case functions return 0..1; RULER's task
score is their mean × 100 rounded to 2 decimals (:func:`task_score`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

STRING_MATCH_ALL = "string_match_all"
STRING_MATCH_PART = "string_match_part"
_NON_PRINTABLE = re.compile(r"[\x00-\x1f]")


def postprocess_pred(pred: str) -> str:
    """RULER's clean-up of a prediction: strip, control characters become newlines, strip."""
    return _NON_PRINTABLE.sub("\n", pred.strip()).strip()


def string_match_all(pred: str, refs: Sequence[str]) -> float:
    """Share of references found (case-insensitive substring) in one prediction, 0..1."""
    if not refs:
        return 0.0
    p = postprocess_pred(pred).lower()
    return sum(1.0 for r in refs if r.lower() in p) / len(refs)


def string_match_part(pred: str, refs: Sequence[str]) -> float:
    """1.0 if any reference is found (case-insensitive substring) in the prediction."""
    p = postprocess_pred(pred).lower()
    return max((1.0 if r.lower() in p else 0.0 for r in refs), default=0.0)


def match(metric: str, pred: str, refs: Sequence[str]) -> float:
    if metric == STRING_MATCH_ALL:
        return string_match_all(pred, refs)
    if metric == STRING_MATCH_PART:
        return string_match_part(pred, refs)
    raise ValueError(f"unknown RULER metric {metric!r}")


def task_score(per_case: Sequence[float]) -> float:
    """RULER's task score from per-case scores (0..1): mean × 100, rounded to 2 places."""
    return round(sum(per_case) / len(per_case) * 100, 2) if per_case else 0.0


def string_match_all_batch(preds: Sequence[str], refs: Sequence[Sequence[str]]) -> float:
    """RULER's corpus-level form, 0..100 (rounded to 2 places, as RULER does)."""
    return task_score([string_match_all(p, r) for p, r in zip(preds, refs)])


def string_match_part_batch(preds: Sequence[str], refs: Sequence[Sequence[str]]) -> float:
    return task_score([string_match_part(p, r) for p, r in zip(preds, refs)])
