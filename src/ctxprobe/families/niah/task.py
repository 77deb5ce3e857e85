"""``niah``: retrieve facts stated once (needle in a haystack), optionally under interference.

Design: random ``adjective-noun-NNN`` keys bound to random 7-digit values,
stated at sentence boundaries ("The special magic number for KEY is VALUE."); the question
at the end. ``variant`` picks what is hidden and asked:

``single`` (default)
    One needle at the cell depth, one key asked. Strict: 1 only if the target value is in
    the output and no distractor value is.
``multikey``
    ``keys`` needles of the same form, one of them asked (at the cell depth); the other
    ``keys - 1`` sit at random depths. With ``near_miss`` (default) they share the asked
    key's adjective and noun and differ only in the number, so only exact key matching
    finds the right one. Scored like ``single``; the other keys' values are distractors.
``multivalue``
    ``values`` needles binding *one* key to different values. Value i (i = 0..n-1) sits at
    depth ``(d + i/n) mod 1``: the first at the cell depth d, the rest evenly spaced around
    the haystack as if it wrapped, so the set always spans the context.
``multiquery``
    ``queries`` keys, one value each, all asked at once; key i at ``(d + i/n) mod 1`` as
    in multivalue.

``distractors=k`` adds k same-form needles with other keys at random depths in every
variant. Set answers (multivalue, multiquery) are scored by :mod:`ctxprobe.scores.setscore`
over the output's numbers (every run of 5+ digits): F1 with ``partial`` for partial
credit; detail records each value's / key's hit. Because strict retrieval forbids
answering another key's value, any distractor value in the output scores 0
(outcome ``distractor``) — so an answer listing every number in the prompt earns nothing.
Numbers written with digit-group separators (``9,996,995``, ``9 996 995``) are read as their
digits first (:mod:`ctxprobe.scores.numbers`); a value inside a longer number still never
counts, and a miss holding a formatting no grouping reads is ``parse_error``.

For one (length, repetition) the cases at every depth share filler, keys and values; only
the positions change. That pairs depths (a cleaner depth effect) and lets a server's
prefix cache reuse the text before the needle.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.packer import Insert, locate, pack
from ctxprobe.haystack.pool_cache import PoolCache
from ctxprobe.core.case import derive_seed, Case, Cell
from ctxprobe.families.niah.task_meta import NiahMeta, NiahNeedle, NiahTarget, niah_meta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.haystack.context import BuildContext
from ctxprobe.spec import PromptLayout
from ctxprobe.scores.classify import classify_miss
from ctxprobe.haystack.layout import DEFAULT_LAYOUT, conversation, conversation_text, turns_back
from ctxprobe.haystack.nocontext import no_context_case
from ctxprobe.haystack.order import HaystackOrder, order_meta, shuffle_seed
from ctxprobe.haystack.overlap import evidence_overlap
from ctxprobe.scores.numbers import malformed_grouped, normalise_grouped
from ctxprobe.scores.setscore import count_exact, match_set, score_set
from ctxprobe.haystack.words import random_key, random_value
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
QUESTION_MULTIVALUE = (
    "What are all the special magic numbers for {key} mentioned in the text above? "
    "Answer with the numbers only, separated by commas."
)
QUESTION_MULTIQUERY = (
    "What are the special magic numbers for {keys} mentioned in the text above? "
    "Answer with the numbers only, in the order asked, separated by commas."
)
Variant = Literal["single", "multikey", "multivalue", "multiquery"]
#: Which knob belongs to which variant (setting it elsewhere is a user error).
_VARIANT_KNOBS = {"keys": "multikey", "near_miss": "multikey", "values": "multivalue", "queries": "multiquery"}
_NUMBER = re.compile(r"(?<!\d)\d{5,}(?!\d)")


class NiahParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    variant: Variant = Field("single", description="single | multikey | multivalue | multiquery")
    distractors: int = Field(0, ge=0, le=200, description="same-form needles with other keys")
    keys: int = Field(4, ge=2, le=200, description="multikey: same-form needles in all, one asked")
    near_miss: bool = Field(True, description="multikey: other keys differ from the asked one only in the number")
    values: int = Field(4, ge=2, le=50, description="multivalue: values bound to the asked key")
    queries: int = Field(4, ge=2, le=50, description="multiquery: keys asked at once")
    haystack_order: HaystackOrder = Field("coherent", description="coherent filler, or the same sentences shuffled")

    @model_validator(mode="after")
    def _knobs_match_variant(self) -> NiahParams:
        for knob, variant in _VARIANT_KNOBS.items():
            if knob in self.model_fields_set and self.variant != variant:
                # not a ValueError: pydantic would bury it under a location-less message
                raise CtxprobeError(f"niah parameter '{knob}' applies to variant={variant} only (got variant={self.variant})")
        return self


def render(haystack: str, key: str, layout: PromptLayout = DEFAULT_LAYOUT) -> list[Message]:
    return render_question(haystack, QUESTION.format(key=key), layout)


def render_question(haystack: str, question: str, layout: PromptLayout = DEFAULT_LAYOUT,
                    evidence: tuple[str, ...] = ()) -> list[Message]:
    return conversation(INSTRUCTION, haystack, question, layout, evidence)


def has_number(text: str, value: str) -> bool:
    return re.search(rf"(?<!\d){re.escape(value)}(?!\d)", text) is not None


def spread_depth(first: float, i: int, n: int) -> float:
    """Depth of item i of n: the first at ``first``, the rest evenly spaced, wrapping."""
    return first if i == 0 else (first + i / n) % 1.0


class Niah(FamilyBase):
    name = "niah"
    floor_kind = "no-context"
    params_model = NiahParams

    @classmethod
    def answer_items(cls, params: Mapping[str, Any]) -> int:
        """Values a multivalue answer lists, keys a multiquery one asks; one otherwise."""
        fields = NiahParams.model_fields
        variant = params.get("variant", fields["variant"].default)
        knob = {"multivalue": "values", "multiquery": "queries"}.get(str(variant))
        return int(params.get(knob, fields[knob].default)) if knob else 1

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._pools = PoolCache(ctx)

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, NiahParams)
        v = params.variant
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)
        keys: set[str] = set()
        values: set[str] = set()
        # Draw order: target, distractors, then variant extras, so `single` cases keep the
        # exact content they had before variants existed; nothing drawn depends on depth.
        key, value = random_key(rng, keys), random_value(rng, values)
        targets: list[NiahNeedle] = [{"key": key, "value": value, "depth": cell.depth}]
        others: list[NiahNeedle] = []
        for _ in range(params.distractors):
            dk, dv, dd = random_key(rng, keys), random_value(rng, values), rng.random()
            others.append({"key": dk, "value": dv, "depth": round(dd, 4)})
        if v == "multikey":
            for _ in range(params.keys - 1):
                dk = _near_miss_key(rng, key, keys) if params.near_miss else random_key(rng, keys)
                others.append({"key": dk, "value": random_value(rng, values), "depth": round(rng.random(), 4)})
        elif v == "multivalue":
            for i in range(1, params.values):
                targets.append({"key": key, "value": random_value(rng, values), "depth": spread_depth(cell.depth, i, params.values)})
        elif v == "multiquery":
            for i in range(1, params.queries):
                targets.append({"key": random_key(rng, keys), "value": random_value(rng, values),
                                "depth": spread_depth(cell.depth, i, params.queries)})
        asked = list(dict.fromkeys(t["key"] for t in targets))
        question = _question(v, asked)
        inserts = [Insert(NEEDLE.format(key=t["key"], value=t["value"]), t["depth"], "target") for t in targets]
        inserts += [Insert(NEEDLE.format(key=d["key"], value=d["value"]), d["depth"], "distractor") for d in others]

        tok = self.ctx.tokenizer
        layout = self.ctx.layout
        if self.ctx.no_context:  # the noise floor: the same question among filler only
            return self._no_context(cell, rep, group_seed, question, targets, others, params)
        evidence = (inserts[0].text,)
        packed = pack(tok, lambda h: render_question(h, question, layout, evidence), self._pools.get(group_seed), inserts,
                      cell.length, lead_tokens=layout.separator, shuffle_seed=shuffle_seed(params, group_seed))
        content = conversation_text(packed.messages)
        self._check_unique(content, targets, others, asked)
        pos, realised = locate(tok, packed, 0, inserts[0].text)
        meta: NiahMeta = {
            "variant": v,
            "key": key,
            "needle": inserts[0].text,
            "distractor_needles": others,
            "question": question,
            "overlap": evidence_overlap(question, [i.text for i in inserts[: len(targets)]]),
            "n_filler": packed.n_filler,
            "haystack_tokens": packed.haystack_tokens,
            "encodes": packed.encodes,
        }
        meta.update(order_meta(params))
        if layout.messages != "single":  # the default layout's meta is unchanged
            meta["turns_back"] = turns_back(packed.messages, inserts[0].text)
        if v in ("multivalue", "multiquery"):
            meta["keys"] = asked
            meta["needles"] = [NiahTarget(key=t["key"], value=t["value"], depth=round(t["depth"], 4),
                                          token_offset=packed.insert_offsets[i]) for i, t in enumerate(targets)]
        return Case(
            cell=cell,
            rep=rep,
            seed=group_seed,
            messages=packed.messages,
            expected=[t["value"] for t in targets],
            distractors=[str(d["value"]) for d in others],
            meta=meta,
            token_count=packed.token_count,
            needle_token_pos=pos,
            realised_depth=round(realised, 6),
            prompt_ids=packed.prompt_ids,
        )

    def _no_context(self, cell: Cell, rep: int, group_seed: int, question: str, targets: list[NiahNeedle],
                    others: list[NiahNeedle], params: NiahParams) -> Case:
        """The question with filler only, to the same length: what a model answers without
        the evidence (a 7-digit value cannot be guessed, so this floor is about 0)."""
        layout = self.ctx.layout
        return no_context_case(self.ctx, cell, rep, group_seed, lambda h: render_question(h, question, layout),
                               self._pools.get(group_seed), [t["value"] for t in targets],
                               distractors=[str(d["value"]) for d in others],
                               meta={"variant": params.variant, "key": targets[0]["key"], "question": question,
                                     "distractor_needles": others, **order_meta(params)},
                               shuffle_seed=shuffle_seed(params, group_seed),
                               absent=[str(t["value"]) for t in [*targets, *others]])

    @staticmethod
    def _check_unique(content: str, targets: list[NiahNeedle], others: list[NiahNeedle], asked: list[str]) -> None:
        """Answers and keys occur exactly where intended and nowhere else (a generation bug
        otherwise, not a user error: fail loudly)."""
        problems = []
        for key in asked:  # once per needle stating it, once in the question
            want = sum(t["key"] == key for t in targets) + 1
            if count_exact(content, key) != want:
                problems.append(f"key {key} occurs {count_exact(content, key)}x (expected {want})")
        for t in targets:
            if len(re.findall(rf"(?<!\d){t['value']}(?!\d)", content)) != 1:
                problems.append(f"value {t['value']} is not unique")
        for d in others:
            if count_exact(content, str(d["key"])) != 1 or len(re.findall(rf"(?<!\d){d['value']}(?!\d)", content)) != 1:
                problems.append(f"distractor {d['key']} is not unique")
        placed = {str(x["value"]) for x in [*targets, *others]}
        stray = [n for n in _NUMBER.findall(content) if n not in placed]
        if stray:
            problems.append(f"unplaced numbers in the prompt: {stray[:3]}")
        if problems:
            raise CtxprobeError("case generation check failed: " + "; ".join(problems))

    def score(self, case: Case, output: str) -> Scored:
        """Strict score of ``output``, read with grouped numbers (``9,996,995``) as their
        digits (:mod:`ctxprobe.scores.numbers`); a miss that still holds a formatted number
        no grouping reads is ``parse_error``, not ``wrong``."""
        scored = self._score(case, normalise_grouped(output))
        if scored.outcome == Outcome.WRONG and malformed_grouped(normalise_grouped(output)):
            scored.outcome = Outcome.PARSE_ERROR
        return scored

    def _score(self, case: Case, output: str) -> Scored:
        meta = niah_meta(case.meta)
        variant = meta.get("variant", "single")
        hits = [v for v in case.distractors if has_number(output, v)]
        if hits:
            by_value: dict[str, Mapping[str, object]] = {str(d["value"]): d for d in meta.get("distractor_needles", [])}
            return Scored(0.0, Outcome.DISTRACTOR, {"distractors": [by_value.get(v, {"value": v}) for v in hits]})
        if variant in ("single", "multikey"):
            if has_number(output, case.expected[0]):
                return Scored(1.0, Outcome.CORRECT)
            return Scored(0.0, classify_miss(output))
        match = match_set(case.expected, _NUMBER.findall(output))
        got = set(match.hits)
        if variant == "multiquery":
            per = {n["key"]: n["value"] in got for n in meta.get("needles", [])}
            return score_set(match, output, per_key=per)
        return score_set(match, output, per_value={e: e in got for e in case.expected})


def _question(variant: str, asked: list[str]) -> str:
    if variant == "multivalue":
        return QUESTION_MULTIVALUE.format(key=asked[0])
    if variant == "multiquery":
        return QUESTION_MULTIQUERY.format(keys=", ".join(asked[:-1]) + " and " + asked[-1])
    return QUESTION.format(key=asked[0])


def _near_miss_key(rng: random.Random, key: str, taken: set[str]) -> str:
    """A key sharing ``key``'s adjective and noun with another number (hard interference)."""
    stem = key.rsplit("-", 1)[0]
    for _ in range(1000):
        k = f"{stem}-{rng.randint(100, 999)}"
        if k not in taken:
            taken.add(k)
            return k
    return random_key(rng, taken)  # the stem's 900 numbers are used up: fall back
