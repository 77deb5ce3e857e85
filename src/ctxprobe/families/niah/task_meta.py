"""What a ``niah`` case stores in ``Case.meta``, key by key (a ``TypedDict``: a cast at
runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from ctxprobe.core.case_meta import Overlap, _Filler


class NiahNeedle(TypedDict):
    """A key/value needle placed at a depth."""

    key: str
    value: str
    depth: float


class NiahTarget(NiahNeedle):
    """An asked needle (multivalue, multiquery) with where its text starts in the prompt."""

    token_offset: int


class _NiahMeta(_Filler):
    variant: Literal["single", "multikey", "multivalue", "multiquery"]
    key: str
    needle: str
    distractor_needles: list[NiahNeedle]
    question: str
    overlap: Overlap


class NiahMeta(_NiahMeta, total=False):
    keys: list[str]  # multivalue, multiquery: the keys asked
    needles: list[NiahTarget]  # multivalue, multiquery: every asked needle


def niah_meta(meta: Mapping[str, Any]) -> NiahMeta:
    return cast(NiahMeta, meta)
