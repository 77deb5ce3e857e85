"""What a phone-book case stores in ``Case.meta``, key by key (a ``TypedDict``: a cast at
runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast


class PhonebookLayout(TypedDict):
    book_in: Literal["system", "user"]
    system_role: bool
    repeat_instructions: bool
    examples: int


class PhonebookMeta(TypedDict):
    unit: Literal["tokens", "entries"]
    entries: int
    needles: int
    run: int
    shard: int
    shards: int
    shard_range: list[int]
    names: list[str]
    indices: list[int]
    encodes: int
    bins: list[list[int]]
    method: Literal["ctxprobe", "post"]
    cot: bool
    post_normalise: bool
    layout: PhonebookLayout


def phonebook_meta(meta: Mapping[str, Any]) -> PhonebookMeta:
    return cast(PhonebookMeta, meta)
