"""``multihop``: two facts placed far apart, joined by reasoning rather than word matching.

Design: a person → organisation → city chain built
from random invented names (pronounceable, never real words, never in the filler):

    first hop   "Orlan Vesk works at the Tamber lab."        at the cell's depth
    second hop  "The Tamber lab is based in Quilport."        at ``second_depth`` / ``gap``
    question    "In which city is Orlan Vesk's workplace located? Answer with the name of
                 the city only."

The question shares **no content word** with the second fact (see
:mod:`ctxprobe.haystack.overlap`): neither the organisation nor the city, nor any template
word. A case where it does is a generation bug and raises. Overlap with each fact is stored
in ``meta["overlap"]``.

Parameters:

- ``distractors`` (default 2): other complete person → organisation → city chains, each
  fact at its own random depth. Their cities are the distractor values.
- ``second_depth`` (default None): absolute depth (0 = start, 1 = end of the haystack) of
  the second fact. When None, ``gap`` decides it.
- ``gap`` (default 0.5): the second fact sits ``gap`` after the first
  (``depth + gap``), or ``gap`` before it when that would pass the end
  (``depth - gap``, floored at 0). So with the default, the facts are always half the
  haystack apart, and the second may come first in the text.

Depth semantics: the cell depth (the grid coordinate, ``needle_token_pos``,
``realised_depth``) is the first hop's; the second hop's realised depth and token position
are in ``meta``.

Strict scoring: 1 only if the target city is in the output (case-insensitive, whole word),
no distractor city is, and the answer commits to it. Scanned after removing any echo of the
prompt's instruction or question (small models repeat the question first; neither contains
any of the words below, so the echo cannot trigger a rule):

- **negated** — a negation word (``not``, ``no``, ``never``, ``neither``, ``nor``, ``none``,
  ``cannot``, any ``n't``): "The city is not … Ristpolmouth." is ``wrong``, never
  ``correct``, whatever else it says (``detail["negated"]``);
- **hedged** — ``maybe``, ``perhaps``, ``possibly``, ``probably``, ``likely``, ``might``,
  ``may``, ``could``, ``unsure``, ``uncertain``, ``unclear``, ``unknown``, ``guess``,
  ``think``, ``believe``, ``seems``, ``appears``, ``assume``, ``suppose``
  (``detail["hedged"]``) → ``wrong``;
- **more than one candidate** — a distractor city (outcome ``distractor``), or the target
  offered as an alternative (``or``, ``either``) → ``wrong`` (``detail["alternatives"]``).

Naming the organisation without the city is a miss, marked ``detail["stopped_at_first_hop"]``.
"""

from __future__ import annotations

import random
import re
from collections import OrderedDict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import filler_source, names
from ctxprobe.haystack.packer import FillerPool, Insert, locate, pack
from ctxprobe.core.case import derive_seed, Case, Cell
from ctxprobe.families.multihop.task_meta import MultihopMeta, multihop_meta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.haystack.nocontext import no_context_case
from ctxprobe.haystack.order import HaystackOrder, order_meta, shuffle_seed
from ctxprobe.haystack.context import BuildContext
from ctxprobe.spec import PromptLayout
from ctxprobe.scores.classify import classify_miss
from ctxprobe.haystack.layout import DEFAULT_LAYOUT, after_wording, conversation, conversation_text, turns_back
from ctxprobe.haystack.overlap import STOPWORDS, content_words, evidence_overlap, overlap
from ctxprobe.tokenizers.base import Message

INSTRUCTION = (
    "A long text follows. Some of its sentences say who works where and where places of "
    "work are. Combine them to answer the question at the end."
)
FIRST_HOP = ("{person} works at the {org}.", "{person} is employed by the {org}.", "{person} has a job at the {org}.")
SECOND_HOP = ("The {org} is in {city}.", "The {org} is based in {city}.", "The {org} has its offices in {city}.",
              "The {org} is headquartered in {city}.")
QUESTIONS = ("In which city is {person}'s workplace located?", "Which city does {person} commute to for work?",
             "Name the city where {person}'s employer operates.")
ANSWER_FORMAT = "Answer with the name of the city only."
ORG_KINDS = ("lab", "institute", "studio", "foundry", "agency", "bureau", "guild", "clinic", "observatory")

#: Words of every template: an invented name may never be one of them.
TEMPLATE_WORDS = frozenset().union(*(content_words(t) for t in (
    INSTRUCTION, ANSWER_FORMAT, *FIRST_HOP, *SECOND_HOP, *QUESTIONS, " ".join(ORG_KINDS))))
#: What an invented name may never be: a word of the templates, or a stopword.
_AVOID = TEMPLATE_WORDS | STOPWORDS
_ATTEMPTS = 8


class MultihopParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    distractors: int = Field(2, ge=0, le=100, description="other person→organisation→city chains")
    second_depth: float | None = Field(None, ge=0.0, le=1.0, description="absolute depth of the second fact")
    gap: float = Field(0.5, ge=0.0, le=1.0, description="distance of the second fact from the first")
    haystack_order: HaystackOrder = Field("coherent", description="coherent filler, or the same sentences shuffled")


def second_hop_depth(depth: float, params: MultihopParams) -> float:
    """Where the second fact goes for a first fact at ``depth`` (see module docstring)."""
    if params.second_depth is not None:
        return params.second_depth
    return depth + params.gap if depth + params.gap <= 1.0 else max(0.0, depth - params.gap)


def person_name(rng: random.Random, taken: set[str]) -> str:
    """An invented person's name, no word of it a template word or stopword."""
    return names.person_name(rng, taken, _AVOID)


def org_name(rng: random.Random, taken: set[str]) -> str:
    """``Tamber lab``: an invented name (the part checked for uniqueness) and a kind."""
    return names.fresh(rng, taken, lambda r: names.invented_word(r, 2), _AVOID) + " " + rng.choice(ORG_KINDS)


def city_name(rng: random.Random, taken: set[str]) -> str:
    return names.city_name(rng, taken, _AVOID)


def has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text, re.IGNORECASE) is not None


def count_word(text: str, word: str) -> int:
    return len(re.findall(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text, re.IGNORECASE))


_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none|cannot)\b|n['’]t\b", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|likely|unlikely|might|may|could|unsure|uncertain|unclear|"
    r"unknown|guess|think|believe|seems?|appears?|assume|suppose)\b", re.IGNORECASE)
_ALTERNATIVE = re.compile(r"\b(?:or|either)\b", re.IGNORECASE)


def uncommitted(output: str, echoes: list[str]) -> dict[str, bool]:
    """Why an output that names the right city still does not commit to it (empty if it
    does): negation, hedging or alternatives, after removing echoes of the prompt's text."""
    text = output
    for echo in echoes:
        if echo:
            text = re.sub(re.escape(echo), " ", text, flags=re.IGNORECASE)
    reasons = {"negated": bool(_NEGATION.search(text)), "hedged": bool(_HEDGE.search(text)),
               "alternatives": bool(_ALTERNATIVE.search(text))}
    return {k: v for k, v in reasons.items() if v}


def render(haystack: str, question: str, layout: PromptLayout = DEFAULT_LAYOUT,
           evidence: tuple[str, ...] = ()) -> list[Message]:
    return conversation(INSTRUCTION, haystack, question, layout, evidence)


def check_zero_overlap(question: str, second_fact: str) -> None:
    """The family's promise; a violation is a bug in the templates or names, never data."""
    shared = overlap(question, second_fact).shared
    if shared:
        raise CtxprobeError(
            f"multihop generation bug: question shares {', '.join(shared)} with the second fact")


class Multihop(FamilyBase):
    name = "multihop"
    floor_kind = "no-context"
    params_model = MultihopParams

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._pools: OrderedDict[int, FillerPool] = OrderedDict()

    def _pool(self, group_seed: int) -> FillerPool:
        """Every depth of a (length, repetition) group shares filler (paired design)."""
        pool = self._pools.get(group_seed)
        if pool is None:
            pool = self._pools[group_seed] = FillerPool(filler_source(self.ctx.haystack, group_seed), self.ctx.tokenizer)
            while len(self._pools) > 4:
                self._pools.popitem(last=False)
        self._pools.move_to_end(group_seed)
        return pool

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, MultihopParams)
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        problems: list[str] = []
        for attempt in range(_ATTEMPTS):  # a name may collide with the user's filler: redraw
            case, problems = self._attempt(cell, rep, group_seed, attempt, params)
            if case is not None:
                return case
        raise CtxprobeError("multihop case generation check failed: " + "; ".join(problems))

    def _attempt(self, cell: Cell, rep: int, group_seed: int, attempt: int,
                 params: MultihopParams) -> tuple[Case | None, list[str]]:
        rng = random.Random(derive_seed(group_seed, "names", attempt))
        taken: set[str] = set()
        chains: list[dict[str, Any]] = []
        for i in range(1 + params.distractors):
            person, org, city = person_name(rng, taken), org_name(rng, taken), city_name(rng, taken)
            first = rng.choice(FIRST_HOP).format(person=person, org=org)
            second = rng.choice(SECOND_HOP).format(org=org, city=city)
            depths = (cell.depth, second_hop_depth(cell.depth, params)) if i == 0 else (rng.random(), rng.random())
            chains.append({"person": person, "org": org, "city": city, "first": first, "second": second,
                           "depths": [round(d, 4) for d in depths]})
        target = chains[0]
        question = rng.choice(QUESTIONS).format(person=target["person"]) + " " + ANSWER_FORMAT
        check_zero_overlap(question, target["second"])
        inserts = [Insert(target["first"], cell.depth, "first_hop"),
                   Insert(target["second"], target["depths"][1], "second_hop")]
        for ch in chains[1:]:
            inserts += [Insert(ch["first"], ch["depths"][0], "distractor"),
                        Insert(ch["second"], ch["depths"][1], "distractor")]
        tok = self.ctx.tokenizer
        layout = self.ctx.layout
        if self.ctx.no_context:  # the noise floor: the question among filler only
            try:
                return no_context_case(self.ctx, cell, rep, group_seed, lambda h: render(h, question, layout),
                                       self._pool(group_seed), [str(target["city"])],
                                       distractors=[str(ch["city"]) for ch in chains[1:]],
                                       meta={"question": question, "person": target["person"], "org": target["org"],
                                             "name_attempt": attempt, **order_meta(params)},
                                       shuffle_seed=shuffle_seed(params, group_seed),
                                       absent=[str(target["city"]), str(target["org"]).split()[0]]), []
            except CtxprobeError as err:  # a name collides with the user's filler: redraw
                return None, [str(err)]
        evidence = (str(target["first"]),)
        packed = pack(tok, lambda h: render(h, question, layout, evidence), self._pool(group_seed), inserts, cell.length,
                      lead_tokens=layout.separator, shuffle_seed=shuffle_seed(params, group_seed))
        problems = self._collisions(conversation_text(packed.messages), chains)
        if problems:
            return None, problems
        pos, realised = locate(tok, packed, 0, target["first"])
        realised = round(realised, 6)
        pos2, realised2 = locate(tok, packed, 1, target["second"])
        realised2 = round(realised2, 6)
        meta: MultihopMeta = {
            "question": question,
            "person": target["person"], "org": target["org"],
            "needle": target["first"], "second_fact": target["second"],
            "second_depth": target["depths"][1],
            "second_token_pos": pos2, "second_realised_depth": realised2,
            "distractor_chains": chains[1:],
            "overlap": evidence_overlap(question, {"first_hop": str(target["first"]),
                                                   "second_hop": str(target["second"])}),
            "name_attempt": attempt,
            "n_filler": packed.n_filler, "haystack_tokens": packed.haystack_tokens, "encodes": packed.encodes,
        }
        meta.update(order_meta(params))
        if layout.messages != "single":  # the default layout's meta is unchanged
            meta["turns_back"] = turns_back(packed.messages, str(target["first"]))
            meta["second_turns_back"] = turns_back(packed.messages, str(target["second"]))
        return Case(
            cell=cell, rep=rep, seed=group_seed, messages=packed.messages,
            expected=[str(target["city"])],
            distractors=[str(ch["city"]) for ch in chains[1:]],
            meta=meta,
            token_count=packed.token_count, needle_token_pos=pos, realised_depth=realised,
            prompt_ids=packed.prompt_ids,
        ), []

    @staticmethod
    def _collisions(content: str, chains: list[dict[str, Any]]) -> list[str]:
        """Every invented word occurs exactly where it was placed and nowhere else."""
        problems = []
        for i, ch in enumerate(chains):
            person_words = str(ch["person"]).split()
            expect = {w: 2 if i == 0 else 1 for w in person_words}  # target: fact + question
            expect[str(ch["org"]).split()[0]] = 2
            expect[str(ch["city"])] = 1
            for word, n in expect.items():
                found = count_word(content, word)
                if found != n:
                    problems.append(f"{word} occurs {found}x (expected {n})")
        return problems

    def score(self, case: Case, output: str) -> Scored:
        hits = [c for c in case.distractors if has_word(output, c)]
        if hits:
            return Scored(0.0, Outcome.DISTRACTOR, {"distractors": hits})
        if has_word(output, case.expected[0]):
            question = str(multihop_meta(case.meta).get("question", ""))
            reasons = uncommitted(output, [question, question.removesuffix(" " + ANSWER_FORMAT), INSTRUCTION,
                                           after_wording(INSTRUCTION)])
            if reasons:
                return Scored(0.0, Outcome.WRONG, reasons)
            return Scored(1.0, Outcome.CORRECT)
        org = str(multihop_meta(case.meta).get("org", "")).split(" ")[0]
        detail = {"stopped_at_first_hop": True} if org and has_word(output, org) else {}
        return Scored(0.0, classify_miss(output), detail)
