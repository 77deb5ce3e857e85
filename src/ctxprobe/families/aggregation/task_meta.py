"""What an ``aggregation`` case stores in ``Case.meta``, key by key (a ``TypedDict``: a
cast at runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class AggregationMeta(TypedDict):
    variant: Literal["common-words", "frequent-words"]
    top: int
    question: str
    ranked: list[list[Any]]  # [word, count], most common first
    distinct_words: int
    list_items: int
    window_items: list[int]
    haystack_tokens: int
    encodes: int
