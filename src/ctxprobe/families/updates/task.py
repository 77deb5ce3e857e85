"""``updates``: K keys, each updated U times in one interleaved stream, then a question for
every key's current (final) value (PI-LLM, Wang & Sun 2025, arXiv 2506.08184).

The stream (:mod:`ctxprobe.families.updates.task_stream`, PI-LLM's wording) sits as one block
in neutral filler at the cell's depth; the prompt is PI-LLM's instruction, the filler with
the stream, and its question. Values are random 5-digit numbers, unique in the case (the
filler has no digits); each occurs exactly once in the prompt, checked at generation.

Parameters:

- ``keys`` (default ``[4]``): K, the tracked keys (PI-LLM's ``n_tracked_keys``).
- ``updates`` (default ``[3, 10]``): U, updates per key (its ``n_tracked_updates``).
  Both are lists, grid axes like the phone book's ``needles``: repetitions cycle through
  every (K, U) pair, ``rep % (len(keys) * len(updates))``, keys outer. From the command
  line: ``--param updates.updates=3,10,30,100,400``.
- ``forget`` (default false): PI-LLM's prompt mitigation, ``forget all the previous updates
  to KEY;`` before every update of a key but its first. A paired variant:
  ``--variants plain,forget:forget=true`` builds the same streams with and without it.
- ``haystack_order``: coherent filler or the same sentences shuffled.

Scoring (:mod:`ctxprobe.families.updates.score`): per key, by exact value; a value the key
held earlier is ``stale``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxprobe.core.case import Case, Cell, derive_seed
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Scored
from ctxprobe.errors import CtxprobeError
from ctxprobe.families.updates import task_stream as stream
from ctxprobe.haystack.packer import Insert, locate, pack
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.layout import DEFAULT_LAYOUT, arrange
from ctxprobe.haystack.pool_cache import PoolCache
from ctxprobe.scores.setscore import count_exact
from ctxprobe.haystack.nocontext import no_context_case
from ctxprobe.haystack.order import HaystackOrder, order_meta, shuffle_seed
from ctxprobe.haystack.words import random_value
from ctxprobe.tokenizers.base import Message

def count_list(v: Any) -> Any:
    """``"3,10,30"`` (a ``--param`` value) or ``3`` → a list of ints; a list passes."""
    if isinstance(v, str):
        return [int(x) for x in v.split(",") if x.strip()]
    return [v] if isinstance(v, int) else v


class UpdatesParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    keys: list[int] = Field(default_factory=lambda: [4], description="K values: tracked keys (reps cycle)")
    updates: list[int] = Field(default_factory=lambda: [3, 10], description="U values: updates per key (reps cycle)")
    forget: bool = Field(False, description="PI-LLM's mitigation: 'forget all the previous updates to KEY;'")
    haystack_order: HaystackOrder = Field("coherent", description="coherent filler, or the same sentences shuffled")

    @field_validator("keys", "updates", mode="before")
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return count_list(v)

    @field_validator("keys")
    @classmethod
    def _keys(cls, v: list[int]) -> list[int]:
        if not v or any(k < 1 or k > len(stream.KEYS) for k in v) or len(set(v)) != len(v):
            raise ValueError(f"keys must be distinct counts from 1 to {len(stream.KEYS)}, e.g. [1, 4]")
        return v

    @field_validator("updates")
    @classmethod
    def _updates(cls, v: list[int]) -> list[int]:
        if not v or any(u < 1 or u > 400 for u in v) or len(set(v)) != len(v):
            raise ValueError("updates must be distinct counts from 1 to 400 (PI-LLM's range), e.g. [3, 10, 30, 100, 400]")
        return v


def grid_point(params: UpdatesParams, rep: int) -> tuple[int, int]:
    """(K, U) of a repetition: reps cycle through keys × updates, keys outer."""
    pairs = [(k, u) for k in params.keys for u in params.updates]
    return pairs[rep % len(pairs)]


def render(haystack: str, keys: list[str], layout: Any = DEFAULT_LAYOUT) -> list[Message]:
    return [{"role": "user", "content": arrange(stream.instruction(keys), haystack, stream.question(keys), layout)}]


class Updates(FamilyBase):
    name = "updates"
    floor_kind = "no-context"
    params_model = UpdatesParams

    @classmethod
    def answer_items(cls, params: Mapping[str, Any]) -> int:
        """Two items a key: PI-LLM's answer line ``The current value of KEY is VALUE.``"""
        return 2 * max(count_list(params.get("keys", [4])) or [4])

    @classmethod
    def check_reps(cls, params: Any) -> list[int]:
        """The repetition with the longest stream (most updates in all) must build."""
        n = len(params.keys) * len(params.updates)
        return [max(range(n), key=lambda r: grid_point(params, r)[0] * grid_point(params, r)[1])]

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._pools = PoolCache(ctx)

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, UpdatesParams)
        k, u = grid_point(params, rep)
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)
        keys = rng.sample(stream.KEYS, k)
        taken: set[str] = set()
        history = {key: [random_value(rng, taken, digits=5) for _ in range(u)] for key in keys}
        pairs = stream.interleave(rng, history)
        final = [history[key][-1] for key in keys]
        stale = [v for key in keys for v in history[key][:-1]]
        layout = self.ctx.layout
        meta: dict[str, Any] = {"keys": keys, "n_keys": k, "updates_per_key": u, "forget": params.forget,
                                "history": history, "question": stream.question(keys), **order_meta(params)}
        if self.ctx.no_context:
            return no_context_case(self.ctx, cell, rep, group_seed, lambda h: render(h, keys, layout),
                                   self._pools.get(group_seed), final, distractors=stale, meta=meta,
                                   shuffle_seed=shuffle_seed(params, group_seed), absent=final + stale)
        text = stream.render_stream(pairs, forget=params.forget)
        inserts = [Insert(text, cell.depth, "target")]
        packed = pack(self.ctx.tokenizer, lambda h: render(h, keys, layout), self._pools.get(group_seed), inserts,
                      cell.length, lead_tokens=layout.separator, shuffle_seed=shuffle_seed(params, group_seed))
        content = "\n".join(m["content"] for m in packed.messages)
        wrong = [v for v in final + stale if count_exact(content, v) != 1]
        if wrong or stream.read_stream(content) != history:
            raise CtxprobeError(f"case generation check failed: updates stream not where it was placed ({wrong[:3]})")
        pos, realised = locate(self.ctx.tokenizer, packed, 0, text)
        meta.update({"stream_tokens": packed.insert_counts[0] if packed.insert_counts else None,
                     "n_filler": packed.n_filler, "haystack_tokens": packed.haystack_tokens,
                     "encodes": packed.encodes})
        return Case(cell=cell, rep=rep, seed=group_seed, messages=packed.messages, expected=final,
                    distractors=stale, meta=meta, token_count=packed.token_count, needle_token_pos=pos,
                    realised_depth=round(realised, 6), prompt_ids=packed.prompt_ids)

    def score(self, case: Case, output: str) -> Scored:
        from ctxprobe.families.updates.score import score_updates

        return score_updates(case.meta["keys"], case.meta["history"], output)

