"""``nolima``: NoLiMa's needle set (adobe-research/NoLiMa, ``needle_set.json``), its
questions placed in the haystack at the cell's depth and scored by NoLiMa's own metric.

Read from a local copy (``needle_set``: nothing is downloaded). Each test is expanded as
NoLiMa's ``evaluation/run_tests.py`` expands it: for every entry, every question type and
every test, the needle with ``{1}``, ``{2}``... replaced by the test's ``input_args``, the
question likewise (as there: each replacement starts again from the question template, so
only the last placeholder found is filled), the entry's ``distractors`` for that question
type likewise, ``gold_answers`` from the test; tests in file order. Repetition ``r`` asks
test ``r mod n``.

A needle holding ``{CHAR}`` gets a character drawn from the entry's ``character_set`` (a
seeded draw from the case's seed; NoLiMa draws with numpy's global generator), put into
the needle and the question, and that character is the only gold answer (as NoLiMa scores it).

The prompt is NoLiMa's task template (the entry's ``task_template`` or
:data:`DEFAULT_TASK_TEMPLATE`) with the haystack and question, sent as the user message
after a system message: ``system_prompt: default`` sends NoLiMa's default for the OpenAI
and vLLM connectors (``You are a helpful assistant``, as its configs' ``use_default_system_prompt:
true`` does), ``needle-set`` the entry's ``system_prompt``, ``none`` nothing. The haystack is
ctxprobe's (the built-in prose or ``--haystack``, e.g. NoLiMa's books), packed to the cell's
token length with the needle at the cell's depth (NoLiMa's own placement walks a book's
lines; ctxprobe places at a sentence boundary). A distractor is placed by NoLiMa's rule: a
uniform draw over the depths outside a free zone of 0.2 around the needle (fixed depths
0.7 / 0.6 / 0.5 below 500 tokens), drawn from the case's seed.

Scoring is NoLiMa's ``_evaluate_response`` for ``metric``: ``contains`` (default, as its run
configs): any gold answer is a substring of the response; ``EM``: the stripped response
is one of the gold answers; ``lastline_EM`` / ``lastline_contains``: the same on the
stripped response's last line. Case-sensitive, no normalisation.
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.core.case import Case, Cell, derive_seed
from ctxprobe.families.nolima.task_meta import NolimaMeta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import filler_source
from ctxprobe.haystack.packer import FillerPool, Insert, LengthTooShort, locate, pack
from ctxprobe.scores.classify import classify_miss
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.order import HaystackOrder, order_meta, shuffle_seed
from ctxprobe.tokenizers.base import Message

#: NoLiMa's ``evaluation/run_tests.py`` DEFAULT_TASK_TEMPLATE.
DEFAULT_TASK_TEMPLATE = (
    "You will answer a question based on the following book snippet:\n\n{haystack}\n\nUse the information "
    "provided in the book snippet to answer the question. Your answer should be short and based on either "
    "explicitly stated facts or strong, logical inferences.\n\nQuestion: {question}\n\n Return only the final "
    "answer with no additional explanation or reasoning.")
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant"
Metric = Literal["contains", "EM", "lastline_EM", "lastline_contains"]


class NolimaParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    needle_set: str = Field(description="NoLiMa's needle_set.json (a local copy)")
    metric: Metric = "contains"
    system_prompt: Literal["default", "needle-set", "none"] = "default"
    haystack_order: HaystackOrder = Field("coherent", description="coherent filler, or the same sentences shuffled")


@dataclass(frozen=True)
class NolimaTest:
    name: str
    needle: str
    question: str
    gold_answers: tuple[str, ...]
    character_set: tuple[str, ...]
    system_prompt: str
    task_template: str
    distractor: str | None


def expand(entries: list[dict[str, Any]]) -> list[NolimaTest]:
    """run_tests.py's expansion (module docstring)."""
    tests: list[NolimaTest] = []
    for exp in entries:
        for qtype, question in exp["questions"].items():
            for test_id, test in exp["tests"].items():
                needle, full_q, distractor = str(exp["needle"]), str(question), None
                for no, arg in enumerate(test["input_args"]):
                    ph = "{" + str(no + 1) + "}"
                    if ph in question:
                        full_q = question.replace(ph, arg)
                    if ph in needle:
                        needle = needle.replace(ph, arg)
                    if "distractors" in exp and ph in exp["distractors"][qtype]:
                        distractor = exp["distractors"][qtype].replace(ph, arg)
                tests.append(NolimaTest(f"{exp['id']}_{test_id}_{qtype}", needle, full_q,
                                        tuple(test.get("gold_answers", ())), tuple(exp.get("character_set", ())),
                                        str(exp.get("system_prompt", "")),
                                        str(exp.get("task_template", DEFAULT_TASK_TEMPLATE)), distractor))
    return tests


@functools.lru_cache(maxsize=4)
def load_needle_set(path: str) -> tuple[NolimaTest, ...]:
    p = Path(path)
    try:
        entries = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise CtxprobeError(f"cannot read needle set {path!r}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise CtxprobeError(f"{path} is not NoLiMa's needle-set JSON ({err.msg})") from None
    if not isinstance(entries, list) or not entries:
        raise CtxprobeError(f"{path} is not NoLiMa's needle set: expected a non-empty list of entries")
    for i, exp in enumerate(entries):
        missing = [k for k in ("id", "needle", "questions", "tests") if not isinstance(exp, dict) or k not in exp]
        if missing:
            raise CtxprobeError(f"{path} entry {i}: lacks {', '.join(missing)} of NoLiMa's needle-set layout")
    tests = expand(entries)
    for t in tests:
        if "{CHAR}" in t.needle and not t.character_set:
            raise CtxprobeError(f"{path} test {t.name}: its needle has {{CHAR}} but the entry has no character_set")
        if "{CHAR}" not in t.needle and not t.gold_answers:
            raise CtxprobeError(f"{path} test {t.name}: no gold_answers")
    return tuple(tests)


def nolima_score(response: str, gold_answers: list[str], metric: str) -> int:
    """NoLiMa's ``_evaluate_response``."""
    if metric == "EM":
        return int(response.strip() in gold_answers)
    if metric == "contains":
        return int(any(g in response for g in gold_answers))
    last = response.strip().split("\n")[-1]
    if metric == "lastline_EM":
        return int(last in gold_answers)
    if metric == "lastline_contains":
        return int(any(g in last for g in gold_answers))
    raise CtxprobeError(f"unknown NoLiMa metric {metric!r}")


def distractor_depth(depth: float, length: int, rng: random.Random, free_zone: float = 0.2) -> float:
    """NoLiMa's ``book_haystack.py`` rule (module docstring)."""
    left = max(0.0, depth - 2 * free_zone)
    right = max(0.0, 1 - (depth + 2 * free_zone))
    d = rng.uniform(0, left + right)
    d = depth + free_zone + (d - left) if d > left else d + free_zone
    if length < 500:
        d = 0.7 if depth < 0.6 else (0.6 if depth > 0.75 else 0.5)
    return min(max(d, 0.0), 1.0)


class Nolima(FamilyBase):
    name = "nolima"
    params_model = NolimaParams

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, NolimaParams)
        tests = load_needle_set(str(Path(params.needle_set).expanduser()))
        test = tests[rep % len(tests)]
        group_seed = derive_seed(seed, self.name, test.name, cell.length, rep)
        rng = random.Random(group_seed)
        needle, question, gold = test.needle, test.question, list(test.gold_answers)
        if "{CHAR}" in needle:
            char = rng.choice(test.character_set)
            needle, question, gold = needle.replace("{CHAR}", char), question.replace("{CHAR}", char), [char]
        system = {"default": DEFAULT_SYSTEM_PROMPT, "needle-set": test.system_prompt, "none": ""}[params.system_prompt]

        def render(haystack: str) -> list[Message]:
            user: Message = {"role": "user", "content": test.task_template.format(haystack=haystack, question=question)}
            return ([{"role": "system", "content": system}] if system else []) + [user]

        inserts = [Insert(needle, cell.depth, "target")]
        if test.distractor:
            inserts.append(Insert(test.distractor, distractor_depth(cell.depth, cell.length, rng), "distractor"))
        source = filler_source(self.ctx.haystack, group_seed)
        pool = FillerPool((s for s in source if not any(g in s for g in gold)), self.ctx.tokenizer)
        try:
            packed = pack(self.ctx.tokenizer, render, pool, inserts, cell.length,
                          shuffle_seed=shuffle_seed(params, group_seed))
        except LengthTooShort as err:
            raise CtxprobeError(f"nolima test {test.name} needs {err.needed} tokens; use longer lengths") from None
        pos, realised = locate(self.ctx.tokenizer, packed, 0, needle)
        meta: NolimaMeta = {"test": test.name, "needle": needle, "question": question, "metric": params.metric,
                                "distractor": test.distractor, "system_prompt": params.system_prompt,
                                "n_filler": packed.n_filler, "haystack_tokens": packed.haystack_tokens,
                                "encodes": packed.encodes}
        meta.update(order_meta(params))
        return Case(cell=cell, rep=rep, seed=group_seed, messages=packed.messages, expected=gold, meta=meta,
                    token_count=packed.token_count, needle_token_pos=pos, realised_depth=round(realised, 6),
                    prompt_ids=packed.prompt_ids)

    def score(self, case: Case, output: str) -> Scored:
        hit = nolima_score(output, list(case.expected), str(case.meta.get("metric", "contains")))
        if hit:
            return Scored(1.0, Outcome.CORRECT, {"metric": case.meta.get("metric")})
        return Scored(0.0, classify_miss(output), {"metric": case.meta.get("metric")})
