"""``instructions``: a personal agent's system prompt holds I verifiable instructions
(IFEval's, :mod:`ctxprobe.families.instructions.task_catalog`), the user's data around them
grows with the length (a profile, memories and a conversation history of neutral filler),
and the last paragraph is the user's request: a short note about a topic.

Parameters:

- ``count`` (default ``[1, 3, 6]``): I, instructions per case; a list, reps cycle through
  it (``--param instructions.count=1,3,6,11``), I distinct types drawn per case.
- ``placement`` (default ``start``): where the instructions sit: ``start`` (the system
  prompt, before the data), ``end`` (a reminder after the data, before the request) or
  ``both``. A paired variant: ``--variants start:placement=start,end:placement=end,both:placement=both``.
- ``haystack_order``: the history filler coherent or shuffled.

Each case stores its instructions in IFEval's own fields in its meta: ``instruction_id_list``,
``kwargs`` (one dict per instruction, IFEval's argument names) and ``prompt`` (the request),
so IFEval's checker can re-score a run from ``export --jsonl``. Scoring
(:mod:`ctxprobe.families.instructions.score`): IFEval's rules, strict and loose.

``--baseline no-context``: the same data and request with no instruction at all: how often
the reply meets the instructions by chance.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxprobe.core.case import Case, Cell, derive_seed
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Scored
from ctxprobe.families.instructions import task_catalog as catalog
from ctxprobe.families.updates.task import count_list
from ctxprobe.haystack.packer import pack
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.pool_cache import PoolCache
from ctxprobe.haystack.order import HaystackOrder, order_meta, shuffle_seed
from ctxprobe.tokenizers.base import Message

SYSTEM = "You are {name}'s personal assistant. You know {name}'s profile, memories and past conversations."
RULES_HEAD = "Follow these instructions in every reply:"
REMINDER_HEAD = "Remember the instructions for every reply:"
CITIES = ("Lisbon", "Leeds", "Ghent", "Tampere", "Porto", "Graz", "Aarhus", "Cork")
JOBS = ("nurse", "librarian", "architect", "baker", "teacher", "pharmacist", "surveyor", "translator")


class InstructionsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: list[int] = Field(default_factory=lambda: [1, 3, 6], description="I values: instructions per case (reps cycle)")
    placement: Literal["start", "end", "both"] = Field("start", description="where the instructions sit")
    haystack_order: HaystackOrder = Field("coherent", description="coherent filler, or the same sentences shuffled")

    @field_validator("count", mode="before")
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return count_list(v)

    @field_validator("count")
    @classmethod
    def _count(cls, v: list[int]) -> list[int]:
        if not v or any(n < 1 or n > len(catalog.TYPES) for n in v) or len(set(v)) != len(v):
            raise ValueError(f"count must be distinct numbers of instructions from 1 to {len(catalog.TYPES)}")
        return v


def request(name: str, topic: str, words: list[str]) -> str:
    return f"Please write a short note to {name} about {topic}: the {words[0]}, the {words[1]} and the {words[2]}."


def rules(ids: list[str], kwargs: list[dict[str, Any]], head: str) -> str:
    return head + "\n" + "\n".join(f"{i + 1}. {catalog.describe(iid, kw)}" for i, (iid, kw) in enumerate(zip(ids, kwargs)))


class Instructions(FamilyBase):
    name = "instructions"
    floor_kind = "no-context"
    params_model = InstructionsParams

    @classmethod
    def answer_items(cls, params: Mapping[str, Any]) -> int:
        """A note of ten lines or so, each worth a few items: room for every instruction's part."""
        return 12 + 3 * max(count_list(params.get("count", [1, 3, 6])) or [6])

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._pools = PoolCache(ctx)

    @classmethod
    def check_reps(cls, params: Any) -> list[int]:
        return [max(range(len(params.count)), key=lambda r: params.count[r])]

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, InstructionsParams)
        n = params.count[rep % len(params.count)]
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)
        name = rng.choice(catalog.NAMES)
        topic, things = rng.choice(catalog.TOPICS)
        words = rng.sample(things, 3)
        ids, kwargs = catalog.draw(rng, n, words)
        profile = (f"Name: {name}\nCity: {rng.choice(CITIES)}\nWork: {rng.choice(JOBS)}\n"
                   f"Prefers: short notes")
        memories = "\n".join(f"- {name} mentioned {t[0]} {rng.choice(t[1])} last month." for t in
                             rng.sample(catalog.TOPICS, 3))
        ask = request(name, topic, words)
        start = params.placement in ("start", "both") and not self.ctx.no_context
        end = params.placement in ("end", "both") and not self.ctx.no_context
        system = SYSTEM.format(name=name) + ("\n\n" + rules(ids, kwargs, RULES_HEAD) if start else "")

        def render(history: str) -> list[Message]:
            parts = [f"## Profile\n{profile}", f"## Memories\n{memories}", f"## Conversation history\n{history}"]
            if end:
                parts.append(rules(ids, kwargs, REMINDER_HEAD))
            return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join([*parts, ask])}]

        packed = pack(self.ctx.tokenizer, render, self._pools.get(group_seed), [], cell.length,
                      shuffle_seed=shuffle_seed(params, group_seed))
        meta: dict[str, Any] = {"instruction_id_list": ids, "kwargs": kwargs, "prompt": ask, "n_instructions": n,
                                "placement": params.placement, "n_filler": packed.n_filler,
                                "haystack_tokens": packed.haystack_tokens, "encodes": packed.encodes,
                                **order_meta(params)}
        if self.ctx.no_context:
            meta["no_context"] = True
        return Case(cell=cell, rep=rep, seed=group_seed, messages=packed.messages, expected=list(ids),
                    meta=meta, token_count=packed.token_count, prompt_ids=packed.prompt_ids)

    def score(self, case: Case, output: str) -> Scored:
        from ctxprobe.families.instructions.score import score_instructions

        return score_instructions(case.meta["instruction_id_list"], case.meta["kwargs"], output)
