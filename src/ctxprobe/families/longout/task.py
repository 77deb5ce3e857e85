"""``longout``: a long answer. A seeded page of N records (an HTML table, LongProc's
HTML→TSV) sits in neutral filler at the cell's depth; the question asks for every record
of one category as TSV rows, in page order. N is set by the answer: the matching rows
are drawn until their TSV (header included) reaches the asked answer length in tokens of
the sweep's tokenizer, and the other records are added so that ``match_share`` of all
records match, interleaved at random.

Parameters:

- ``answer_tokens`` (default ``[500]``): the answer lengths, in tokens; a list, reps cycle
  through it (``--param longout.answer_tokens=500,2000,8000``, LongProc's 0.5K/2K/8K).
- ``match_share`` (default 0.5): the share of the page's records that match the rule.
- ``haystack_order``: the filler coherent or shuffled.

The default ``--max-tokens`` makes room for the longest answer with a quarter more
(``answer_items``); a reply cut there is ``output_truncated`` and left out of accuracy, never
scored as the model's miss (``long_output``). Scoring: :mod:`ctxprobe.families.longout.score`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxprobe.core.case import Case, Cell, derive_seed
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Scored
from ctxprobe.families.longout import task_page as page
from ctxprobe.families.updates.task import count_list
from ctxprobe.haystack.packer import Insert, locate, pack
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.layout import DEFAULT_LAYOUT, conversation
from ctxprobe.haystack.pool_cache import PoolCache
from ctxprobe.haystack.order import HaystackOrder, order_meta, shuffle_seed
from ctxprobe.haystack.words import ADJECTIVES, NOUNS
from ctxprobe.tokenizers.base import Message

INSTRUCTION = "A long text follows. Somewhere in it is a web page with a table of records."
HEADROOM = 1.25  # output limit over the longest answer
LEAD = 32  # tokens of lead-in and fences the limit adds


class LongoutParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer_tokens: list[int] = Field(default_factory=lambda: [500], description="answer lengths in tokens (reps cycle)")
    match_share: float = Field(0.5, gt=0.0, le=1.0, description="share of the page's records that match the rule")
    haystack_order: HaystackOrder = Field("coherent", description="coherent filler, or the same sentences shuffled")

    @field_validator("answer_tokens", mode="before")
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return count_list(v)

    @field_validator("answer_tokens")
    @classmethod
    def _answers(cls, v: list[int]) -> list[int]:
        if not v or any(a < 20 or a > 24000 for a in v) or len(set(v)) != len(v):
            raise ValueError("answer_tokens must be distinct token counts from 20 to 24000, e.g. [500, 2000, 8000]")
        return v


def render(haystack: str, column: str, value: str, layout: Any = DEFAULT_LAYOUT) -> list[Message]:
    return conversation(INSTRUCTION, haystack, page.question(column, value), layout)


class Longout(FamilyBase):
    name = "longout"
    floor_kind = None  # no answer can be guessed without the page: the floor is 0 by construction
    long_output = True
    params_model = LongoutParams

    @classmethod
    def answer_items(cls, params: Mapping[str, Any]) -> int:
        """The longest answer with headroom, in the spec's 10-token items."""
        longest = max(count_list(params.get("answer_tokens", [500])) or [500])
        return math.ceil((HEADROOM * longest + LEAD) / 10)

    @classmethod
    def check_reps(cls, params: Any) -> list[int]:
        return [max(range(len(params.answer_tokens)), key=lambda r: params.answer_tokens[r])]

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._pools = PoolCache(ctx)

    def _records(self, rng: random.Random, target: int, share: float) -> tuple[str, list[page.Record], list[int]]:
        category = rng.choice(page.CATEGORIES)
        others = [c for c in page.CATEGORIES if c != category]
        codes: set[str] = set()

        def record(cat: str) -> page.Record:
            while True:
                code = f"{rng.choice('BCDFGHJKLMNPQRSTVWXZ')}{rng.choice('AEIOUY')}-{rng.randint(1000, 9999)}"
                if code not in codes:
                    codes.add(code)
                    break
            return (f"{rng.choice(ADJECTIVES).capitalize()} {rng.choice(NOUNS)}", cat, rng.choice(page.CITIES),
                    str(rng.randint(1950, 2024)), code)

        tok = self.ctx.tokenizer
        matches: list[page.Record] = []
        used = tok.count(page.tsv([]))
        while used < target:
            r = record(category)
            matches.append(r)
            used += tok.count("\n" + "\t".join(r))
        n_other = round(len(matches) * (1 - share) / share)
        records = matches + [record(rng.choice(others)) for _ in range(n_other)]
        order = list(range(len(records)))
        rng.shuffle(order)
        # matching records keep their drawn order among themselves (the answer's order)
        slots = sorted(i for i, j in enumerate(order) if j < len(matches))
        page_records: list[page.Record | None] = [None] * len(records)
        for slot, r in zip(slots, matches):
            page_records[slot] = r
        rest = iter(records[len(matches):])
        final = [r if r is not None else next(rest) for r in page_records]
        return category, final, slots

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, LongoutParams)
        answer = params.answer_tokens[rep % len(params.answer_tokens)]
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)
        category, records, slots = self._records(rng, answer, params.match_share)
        reference = page.tsv([records[i] for i in slots])
        text = page.render_page(records)
        layout = self.ctx.layout
        packed = pack(self.ctx.tokenizer, lambda h: render(h, "category", category, layout),
                      self._pools.get(group_seed), [Insert(text, cell.depth, "target")], cell.length,
                      lead_tokens=layout.separator, shuffle_seed=shuffle_seed(params, group_seed))
        pos, realised = locate(self.ctx.tokenizer, packed, 0, text)
        meta: dict[str, Any] = {"reference_tsv": reference, "answer_tokens": self.ctx.tokenizer.count(page.fenced(reference)),
                                "answer_level": answer, "records": len(records), "matching": len(slots),
                                "rule": {"column": "category", "value": category},
                                "page_tokens": packed.insert_counts[0] if packed.insert_counts else None,
                                "n_filler": packed.n_filler, "haystack_tokens": packed.haystack_tokens,
                                "encodes": packed.encodes, **order_meta(params)}
        return Case(cell=cell, rep=rep, seed=group_seed, messages=packed.messages,
                    expected=[records[i][4] for i in slots], meta=meta, token_count=packed.token_count,
                    needle_token_pos=pos, realised_depth=round(realised, 6), prompt_ids=packed.prompt_ids)

    def score(self, case: Case, output: str) -> Scored:
        from ctxprobe.families.longout.score import score_tsv

        return score_tsv(str(case.meta["reference_tsv"]), output)
