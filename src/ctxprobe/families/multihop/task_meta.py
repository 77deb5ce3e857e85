"""What a ``multihop`` case stores in ``Case.meta``, key by key (a ``TypedDict``: a cast
at runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ctxprobe.core.case_meta import Overlap, _Filler


class MultihopMeta(_Filler):
    question: str
    person: str
    org: str
    needle: str
    second_fact: str
    second_depth: float
    second_token_pos: int | None
    second_realised_depth: float
    distractor_chains: list[dict[str, Any]]  # {"person", "org", "city", "first", "second", "depths"}
    overlap: Overlap
    name_attempt: int


def multihop_meta(meta: Mapping[str, Any]) -> MultihopMeta:
    return cast(MultihopMeta, meta)
