"""Haystack coherence as a parameter (``haystack_order``), shared by the prose families.

``coherent`` (default) keeps the filler in the order its source gives it (running prose,
or your own text with ``--haystack DIR``); ``shuffled`` takes the very same sentences and
permutes them with a seed derived from the case group, so every depth of a (length,
repetition) group gets the same permutation and the needle sits at the depth recorded:
Chroma's "Context Rot" ablation of coherent vs shuffled haystacks.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from ctxprobe.core.case import derive_seed
from ctxprobe.core.case_meta import OrderMeta

HaystackOrder = Literal["coherent", "shuffled"]


def shuffle_seed(params: BaseModel, group_seed: int) -> int | None:
    """The permutation's seed for ``shuffled`` parameters, None for ``coherent``."""
    if getattr(params, "haystack_order", "coherent") != "shuffled":
        return None
    return derive_seed(group_seed, "haystack-order", "shuffled")


def order_meta(params: BaseModel) -> OrderMeta:
    """What a case records of its haystack order: nothing for the default (so coherent
    cases keep their content hash), ``{"haystack_order": "shuffled"}`` otherwise."""
    order = getattr(params, "haystack_order", "coherent")
    return {} if order == "coherent" else {"haystack_order": str(order)}
