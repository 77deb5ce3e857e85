"""The no-context twin of a prose family's case: its question among filler only.

``--baseline no-context`` measures what a model answers *without* the evidence: the same
question, the same token budget, the family's needles, facts, chains or document left out
(:mod:`ctxprobe.core.baseline`). The answer key stays the case's own, so the family scores
the twin exactly as it scores the case; its score is the guess rate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxprobe.core.case import Case, Cell
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.packer import FillerPool, pack
from ctxprobe.haystack.context import BuildContext
from ctxprobe.tokenizers.base import Message


def no_context_case(ctx: BuildContext, cell: Cell, rep: int, group_seed: int, render: Callable[[str], list[Message]],
                    pool: FillerPool, expected: list[str], *, distractors: list[str] | None = None,
                    meta: dict[str, Any] | None = None, shuffle_seed: int | None = None,
                    absent: list[str] | None = None) -> Case:
    """The twin: ``render`` filled with ``pool``'s filler to the cell's length, no insert.
    ``absent`` (default: ``expected``) must not occur in the prompt (case-insensitively):
    a twin that states its answer would be a generation bug, so it fails loudly."""
    packed = pack(ctx.tokenizer, render, pool, [], cell.length, lead_tokens=ctx.layout.separator,
                  shuffle_seed=shuffle_seed)
    content = "\n".join(m["content"] for m in packed.messages).lower()
    present = [a for a in (expected if absent is None else absent) if a and str(a).lower() in content]
    if present:
        raise CtxprobeError(f"case generation check failed: the no-context prompt states {present[:3]}")
    return Case(cell=cell, rep=rep, seed=group_seed, messages=packed.messages, expected=list(expected),
                distractors=list(distractors or []),
                meta={**(meta or {}), "no_context": True, "n_filler": packed.n_filler,
                      "haystack_tokens": packed.haystack_tokens, "encodes": packed.encodes},
                token_count=packed.token_count, prompt_ids=packed.prompt_ids)
