"""What a RULER case stores in ``Case.meta``, key by key (``TypedDict`` s: casts at
runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast


class _RulerMeta(TypedDict):
    ruler_task: str
    metric: str
    answer_prefix: str
    tokens_to_generate: int
    haystack_units: int
    encodes: int


class RulerTaskMeta(TypedDict, total=False):
    """The keys a RULER task adds of its own (each task writes its few)."""

    keys: list[str]  # niah: the keys asked
    needles: list[str]  # niah: the needle sentences
    needle_depths: list[float]  # niah
    value: str  # vt: the value tracked
    icl_names: list[str]  # vt: the worked example's variables
    shot_answer: list[str]  # cwe: the worked example's answer
    vocab_size: int  # fwe
    qa_index: int  # qa: the question's index in the dataset
    query: str  # qa
    n_docs: int  # qa


class RulerMeta(_RulerMeta, RulerTaskMeta):
    """A RULER case: the common keys, then its task's own."""


def ruler_meta(meta: Mapping[str, Any]) -> RulerMeta:
    return cast(RulerMeta, meta)
