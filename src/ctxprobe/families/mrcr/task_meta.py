"""What an ``mrcr`` case stores in ``Case.meta``, key by key (a ``TypedDict``: a cast at
runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`). A published
row's meta (``PublishedMrcrMeta``) is the importer's, in the core."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from ctxprobe.core.case_meta import MrcrCommon


class MrcrMeta(MrcrCommon):
    """A generated MRCR case."""

    format: str
    topic: str
    ordinal: int
    turns: int
    question: str
    rule: Literal["openai", "last-occurrence"]
    answer_tokens: int


def mrcr_meta(meta: Mapping[str, Any]) -> MrcrMeta:
    return cast(MrcrMeta, meta)
