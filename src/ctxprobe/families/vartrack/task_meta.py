"""What a ``vartrack`` case stores in ``Case.meta``, key by key (a ``TypedDict``: a cast
at runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`)."""

from __future__ import annotations

from typing import Any

from ctxprobe.core.case_meta import Overlap, _Filler


class VartrackMeta(_Filler):
    value: str
    question: str
    statements: list[str]
    statement_token_offsets: list[int]
    other_chains: list[dict[str, Any]]  # {"names", "value", "start"}
    overlap: Overlap
