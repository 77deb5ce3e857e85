"""``vartrack``: follow a chain of variable assignments through a long text.

Design (RULER's ``vt``): a chain

    VAR_QZKTD = 48213.   VAR_MBRWE = VAR_QZKTD.   VAR_HLOAX = VAR_MBRWE.   ...

is scattered through neutral filler and interleaved with ``chains - 1`` unrelated chains of
the same shape holding other values. The question asks which variables hold the asked
chain's value; the answer is the set of its ``hops + 1`` variables.

Parameters:

- ``hops`` (default 4): assignments that copy a variable; the chain has ``hops + 1``
  variables (RULER's ``num_hops``).
- ``chains`` (default 3): chains in the text, the asked one included. Their variables
  are the distractors.

Names are ``VAR_`` + 5 random uppercase letters and values random 5-digit numbers, unique
within a case; the filler has no digits and no uppercase runs, and every case checks that
each name and value occurs exactly where it was placed.

Depth semantics: statement i (i = 0..hops) of the asked chain sits at depth
``d + (1 - d) * i / (hops + 1)``: the first (the one holding the number) at the cell depth
d, the copies evenly spaced after it toward the end, always in chain order. At d = 1 the
whole chain sits at the end. Every other chain follows the same rule from its own random
starting depth, so chains interleave. ``needle_token_pos`` and ``realised_depth`` are those
of the asked chain's first statement; every statement's token offset is in ``meta``.

Scoring (:mod:`ctxprobe.scores.setscore`): the answered set is every ``VAR_XXXXX`` name in
the output (case-insensitive). The case score is the **F1** against the chain's variables
(missing ones lower recall, other chains' variables lower precision), so listing every
variable in the prompt never scores 1; ``exact`` set match is stored beside it in detail.
Outcome ``correct`` when exact, ``partial`` when some but not all, ``distractor`` when only
other chains' variables are named.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.packer import Insert, locate, pack
from ctxprobe.core.case import derive_seed, Case, Cell
from ctxprobe.families.vartrack.task_meta import VartrackMeta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Scored
from ctxprobe.haystack.context import BuildContext
from ctxprobe.spec import PromptLayout
from ctxprobe.haystack.layout import DEFAULT_LAYOUT, conversation, conversation_text, turns_back
from ctxprobe.haystack.pool_cache import PoolCache
from ctxprobe.scores.setscore import count_exact
from ctxprobe.haystack.nocontext import no_context_case
from ctxprobe.haystack.order import HaystackOrder, order_meta, shuffle_seed
from ctxprobe.haystack.overlap import evidence_overlap
from ctxprobe.scores.setscore import match_set, score_set
from ctxprobe.haystack.words import random_value
from ctxprobe.tokenizers.base import Message

INSTRUCTION = (
    "A long text follows. Hidden in it are variable assignments: each variable is set "
    "either to a number or to another variable, and then holds that variable's value."
)
QUESTION = (
    "Which variables hold the value {value}, assigned directly or through other variables? "
    "Answer with the variable names only, separated by commas."
)
NAME_RE = re.compile(r"(?<![A-Za-z0-9_])VAR_[A-Za-z]{5}(?![A-Za-z0-9_])", re.IGNORECASE)
_ANY_NUMBER = re.compile(r"\d{5,}")


class VartrackParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hops: int = Field(4, ge=1, le=100, description="copies in the asked chain (it has hops + 1 variables)")
    chains: int = Field(3, ge=1, le=100, description="chains in the text, the asked one included")
    haystack_order: HaystackOrder = Field("coherent", description="coherent filler, or the same sentences shuffled")


def render(haystack: str, value: str, layout: PromptLayout = DEFAULT_LAYOUT,
           evidence: tuple[str, ...] = ()) -> list[Message]:
    """The prompt; ``evidence`` (the asked chain's statements, the one furthest back first)
    gives its turn the layout's evidence role in a ``turns`` layout."""
    return conversation(INSTRUCTION, haystack, QUESTION.format(value=value), layout, evidence)


def random_name(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = "VAR_" + "".join(rng.choice(string.ascii_uppercase) for _ in range(5))
        if name not in taken:
            taken.add(name)
            return name


def chain_statements(names: list[str], value: str) -> list[str]:
    return [f"{names[0]} = {value}."] + [f"{names[i]} = {names[i - 1]}." for i in range(1, len(names))]


def chain_depth(first: float, i: int, hops: int) -> float:
    return first + (1.0 - first) * i / (hops + 1)


class Vartrack(FamilyBase):
    name = "vartrack"
    floor_kind = "no-context"
    params_model = VartrackParams

    @classmethod
    def answer_items(cls, params: Mapping[str, Any]) -> int:
        """Every variable of the asked chain: hops + 1."""
        return int(params.get("hops", VartrackParams.model_fields["hops"].default)) + 1

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._pools = PoolCache(ctx)

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, VartrackParams)
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)
        names: set[str] = set()
        values: set[str] = set()
        chains: list[dict[str, Any]] = []
        for c in range(params.chains):  # nothing drawn here depends on the depth
            chains.append({
                "names": [random_name(rng, names) for _ in range(params.hops + 1)],
                "value": random_value(rng, values, digits=5),
                "start": cell.depth if c == 0 else round(rng.random(), 4),
            })
        inserts: list[Insert] = []
        for c, chain in enumerate(chains):
            for i, text in enumerate(chain_statements(chain["names"], chain["value"])):
                inserts.append(Insert(text, chain_depth(chain["start"], i, params.hops), "target" if c == 0 else "distractor"))
        target = chains[0]
        tok = self.ctx.tokenizer
        layout = self.ctx.layout
        if self.ctx.no_context:  # the noise floor: the question among filler only
            return no_context_case(self.ctx, cell, rep, group_seed, lambda h: render(h, target["value"], layout),
                                   self._pools.get(group_seed), list(target["names"]),
                                   distractors=[name for chain in chains[1:] for name in chain["names"]],
                                   meta={"value": target["value"], "question": QUESTION.format(value=target["value"]),
                                         **order_meta(params)},
                                   shuffle_seed=shuffle_seed(params, group_seed))
        evidence = (inserts[0].text,)  # the value's assignment: the asked chain's statement furthest back
        packed = pack(tok, lambda h: render(h, target["value"], layout, evidence), self._pools.get(group_seed), inserts,
                      cell.length, lead_tokens=layout.separator, shuffle_seed=shuffle_seed(params, group_seed))
        content = conversation_text(packed.messages)
        _check_unique(content, chains)
        pos, realised = locate(tok, packed, 0, inserts[0].text)
        n = params.hops + 1
        question = QUESTION.format(value=target["value"])
        meta: VartrackMeta = {
            "value": target["value"],
            "question": question,
            "statements": [i.text for i in inserts[:n]],
            "statement_token_offsets": packed.insert_offsets[:n],
            "other_chains": [{"names": ch["names"], "value": ch["value"], "start": ch["start"]} for ch in chains[1:]],
            "overlap": evidence_overlap(question, [i.text for i in inserts[:n]]),
            "n_filler": packed.n_filler,
            "haystack_tokens": packed.haystack_tokens,
            "encodes": packed.encodes,
        }
        meta.update(order_meta(params))
        if layout.messages != "single":  # the default layout's meta is unchanged
            meta["turns_back"] = turns_back(packed.messages, inserts[0].text)
            meta["last_turns_back"] = turns_back(packed.messages, inserts[n - 1].text)
        return Case(
            cell=cell,
            rep=rep,
            seed=group_seed,
            messages=packed.messages,
            expected=list(target["names"]),
            distractors=[name for chain in chains[1:] for name in chain["names"]],
            meta=meta,
            token_count=packed.token_count,
            needle_token_pos=pos,
            realised_depth=round(realised, 6),
            prompt_ids=packed.prompt_ids,
        )

    def score(self, case: Case, output: str) -> Scored:
        answered = [n.upper() for n in NAME_RE.findall(output)]
        match = match_set(case.expected, answered)
        got = set(match.hits)
        return score_set(match, output, case.distractors, per_variable={n: n in got for n in case.expected})


def _check_unique(content: str, chains: list[dict[str, Any]]) -> None:
    """Each name occurs where it is assigned and where the next hop copies it; each value in
    its chain's first statement (and the question, for the asked one); nothing else of
    either form anywhere (a generation bug otherwise: fail loudly)."""
    problems: list[str] = []
    for c, chain in enumerate(chains):
        last = len(chain["names"]) - 1
        for i, name in enumerate(chain["names"]):
            want = 1 if i == last else 2
            if count_exact(content, name) != want:
                problems.append(f"{name} occurs {count_exact(content, name)}x (expected {want})")
        want = 2 if c == 0 else 1
        if len(re.findall(rf"(?<!\d){chain['value']}(?!\d)", content)) != want:
            problems.append(f"value {chain['value']} is not where it was placed")
    placed_names = {n for ch in chains for n in ch["names"]}
    stray = {n for n in NAME_RE.findall(content) if n not in placed_names}
    placed_values = {ch["value"] for ch in chains}
    stray |= {v for v in _ANY_NUMBER.findall(content) if v not in placed_values}
    if stray:
        problems.append(f"unplaced names or numbers in the prompt: {sorted(stray)[:3]}")
    if problems:
        raise CtxprobeError("case generation check failed: " + "; ".join(problems))
