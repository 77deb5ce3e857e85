"""``niah``: retrieve one fact stated once (needle in a haystack), optionally among distractors.

Design (DESIGN.md §1): a random ``adjective-noun-NNN`` key bound to a random 7-digit value,
stated once at a sentence boundary at the cell's depth; ``distractors=k`` same-form needles
with other keys placed anywhere; the question at the end. Strict scoring: 1 only if the
target value is in the output and no distractor value is.

For one (length, repetition) the cases at every depth share filler, keys and values; only
the target's position changes. That pairs depths (a cleaner depth effect) and lets a
server's prefix cache reuse the text before the needle.
"""

from __future__ import annotations

import random
import re
from collections import OrderedDict

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import filler_source
from ctxprobe.haystack.packer import FillerPool, Insert, find_subsequence, pack
from ctxprobe.tasks.base import BuildContext, Scored, derive_seed
from ctxprobe.tasks.case import Case, Cell
from ctxprobe.tasks.classify import classify_miss
from ctxprobe.tasks.words import random_key, random_value
from ctxprobe.tokenizers.base import Message

INSTRUCTION = (
    "A long text follows. Hidden in it are special magic numbers, each tied to a key. "
    "Find the one you are asked about."
)
NEEDLE = "The special magic number for {key} is {value}."
QUESTION = (
    "What is the special magic number for {key} mentioned in the text above? "
    "Answer with the number only."
)


class NiahParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    distractors: int = Field(0, ge=0, le=200, description="same-form needles with other keys")


def render(haystack: str, key: str) -> list[Message]:
    content = f"{INSTRUCTION}\n\n{haystack}\n\n{QUESTION.format(key=key)}"
    return [{"role": "user", "content": content}]


def has_number(text: str, value: str) -> bool:
    return re.search(rf"(?<!\d){re.escape(value)}(?!\d)", text) is not None


class Niah:
    name = "niah"
    params_model = NiahParams

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        # filler pools per (seed, length, rep) group: every depth of a group reuses one
        self._pools: OrderedDict[int, FillerPool] = OrderedDict()

    def _pool(self, group_seed: int) -> FillerPool:
        pool = self._pools.get(group_seed)
        if pool is None:
            pool = FillerPool(filler_source(self.ctx.haystack, group_seed), self.ctx.tokenizer)
            self._pools[group_seed] = pool
            while len(self._pools) > 4:
                self._pools.popitem(last=False)
        else:
            self._pools.move_to_end(group_seed)
        return pool

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, NiahParams)
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)
        keys: set[str] = set()
        values: set[str] = set()
        key, value = random_key(rng, keys), random_value(rng, values)
        inserts = [Insert(NEEDLE.format(key=key, value=value), cell.depth, "target")]
        distractors: list[dict[str, object]] = []
        for _ in range(params.distractors):
            dk, dv, dd = random_key(rng, keys), random_value(rng, values), rng.random()
            inserts.append(Insert(NEEDLE.format(key=dk, value=dv), dd, "distractor"))
            distractors.append({"key": dk, "value": dv, "depth": round(dd, 4)})

        tok = self.ctx.tokenizer
        packed = pack(tok, lambda h: render(h, key), self._pool(group_seed), inserts, cell.length)

        content = packed.messages[-1]["content"]
        self._check_unique(content, key, value, distractors)
        # mid-text the needle follows a space; at the very start of the haystack it does not
        pos = find_subsequence(packed.prompt_ids, tok.encode(" " + inserts[0].text))
        if pos is None:
            pos = find_subsequence(packed.prompt_ids, tok.encode(inserts[0].text))
        # share of the rest of the haystack that precedes the needle: 0 = first, 1 = last
        rest = packed.haystack_tokens - tok.count(" " + inserts[0].text)
        realised = packed.insert_offsets[0] / rest if rest > 0 else 0.0
        return Case(
            cell=cell,
            rep=rep,
            seed=group_seed,
            messages=packed.messages,
            expected=[value],
            distractors=[str(d["value"]) for d in distractors],
            meta={
                "key": key,
                "needle": inserts[0].text,
                "distractor_needles": distractors,
                "question": QUESTION.format(key=key),
                "n_filler": packed.n_filler,
                "haystack_tokens": packed.haystack_tokens,
                "encodes": packed.encodes,
            },
            token_count=packed.token_count,
            needle_token_pos=pos,
            realised_depth=round(realised, 6),
            prompt_ids=packed.prompt_ids,
        )

    @staticmethod
    def _check_unique(content: str, key: str, value: str, distractors: list[dict[str, object]]) -> None:
        """Answers and keys occur exactly where intended and nowhere else (a generation bug
        otherwise, not a user error: fail loudly)."""
        problems = []
        if content.count(key) != 2:  # once in its needle, once in the question
            problems.append(f"key {key} occurs {content.count(key)}x (expected 2)")
        if len(re.findall(rf"(?<!\d){value}(?!\d)", content)) != 1:
            problems.append(f"value {value} is not unique")
        for d in distractors:
            if content.count(str(d["key"])) != 1 or len(re.findall(rf"(?<!\d){d['value']}(?!\d)", content)) != 1:
                problems.append(f"distractor {d['key']} is not unique")
        if problems:
            raise CtxprobeError("case generation check failed: " + "; ".join(problems))

    def score(self, case: Case, output: str) -> Scored:
        target = case.expected[0]
        hits = [v for v in case.distractors if has_number(output, v)]
        if hits:
            by_value = {str(d["value"]): d for d in case.meta.get("distractor_needles", [])}
            return Scored(0.0, "distractor", {"distractors": [by_value.get(v, {"value": v}) for v in hits]})
        if has_number(output, target):
            return Scored(1.0, "correct")
        return Scored(0.0, classify_miss(output))
