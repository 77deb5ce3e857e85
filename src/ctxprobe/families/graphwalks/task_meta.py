"""What a ``graphwalks`` case stores in ``Case.meta``, key by key (a ``TypedDict``: a
cast at runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`). A
published row's meta (``PublishedGraphwalksMeta``) is the importer's, in the core."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from ctxprobe.core.case_meta import GraphwalksScoring, PublishedGraphwalksMeta


class GraphwalksMeta(GraphwalksScoring):
    """A generated GraphWalks case."""

    problem: Literal["bfs", "parents"]
    node: str
    bfs_depth: int | None
    operation: str
    edges: int
    nodes: int
    evidence_edges: int


def graphwalks_meta(meta: Mapping[str, Any]) -> GraphwalksMeta | PublishedGraphwalksMeta:
    """A generated case's meta or a published row's (both carry the scoring keys)."""
    return cast("GraphwalksMeta | PublishedGraphwalksMeta", meta)
