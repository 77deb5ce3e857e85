"""The ``ruler`` family: one of RULER's synthetic tasks, rendered and sized as RULER does.

``task`` names a task of RULER's ``synthetic.yaml``. A case is RULER's prompt for that task
(:mod:`ctxprobe.families.ruler.task.render`) as one user turn plus the answer prefix as a trailing
assistant message, which the tokenizer renders after the chat template — RULER's
``model template + answer prefix`` (under a chat template, cwe's worked example is an
exchange of its own before it, as RULER's model template renders it). The haystack size is
the largest whose templated prompt plus the task's ``tokens_to_generate`` fits the length
(RULER's convention: prompt + generation ≤ L; fwe: RULER's stepped word counts); the case
asks for exactly that many output tokens.

Strict score (ctxprobe's own, beside RULER's ``string_match_all``): each reference must
appear as a whole token (``123`` inside ``91234`` does not count), and naming a value bound
to another key (niah) or a name of the worked example (vt) scores 0 as ``distractor``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import filler_source
from ctxprobe.haystack.packer import LengthTooShort
from ctxprobe.core.case import derive_seed, Case, Cell
from ctxprobe.families.ruler.task.meta import RulerMeta, ruler_meta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Scored
from ctxprobe.haystack.context import BuildContext
from ctxprobe.scores.classify import classify_miss
from ctxprobe.families.ruler.task import constants as C
from ctxprobe.families.ruler.task.metrics import STRING_MATCH_PART
from ctxprobe.families.ruler.task.qa import QuestionAnswering, load_qa
from ctxprobe.families.ruler.task.render import CommonWords, FrequentWords, Niah, Rendered, VariableTracking, VtExample
from ctxprobe.tokenizers.base import Message

RulerTask = Literal["niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
                    "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe", "qa_1", "qa_2"]
_MAX_PROBES = 60


class RulerParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: RulerTask = Field(description="a task of RULER's synthetic.yaml")
    qa_file: str | None = Field(None, description="qa_1: RULER's SQuAD v2.0 dev JSON; qa_2: HotpotQA dev JSON")
    essay: str | None = Field(None, description="a folder of text for the essay haystacks (default: built-in prose)")

    @model_validator(mode="after")
    def _qa_needs_its_file(self) -> RulerParams:
        if self.task.startswith("qa_") and not self.qa_file:
            raise CtxprobeError(f"RULER task {self.task} needs its dataset file: --ruler-qa-"
                                f"{'squad' if self.task == 'qa_1' else 'hotpot'} FILE")
        if self.qa_file and not self.task.startswith("qa_"):
            raise CtxprobeError(f"qa_file applies to the RULER QA tasks only (got task={self.task})")
        return self


def messages_for(r: Rendered, chat: bool = False) -> list[Message]:
    """The case's chat: RULER's input as one user turn and the answer prefix as a trailing
    assistant message. ``chat`` (the tokenizer renders a chat template): a task's worked
    examples (cwe) come first as user/assistant exchanges of their own, as RULER's model
    template renders them."""
    turns: list[Message] = []
    if chat and r.shots and r.question is not None:
        for question, reply in r.shots:
            turns += [{"role": "user", "content": question}, {"role": "assistant", "content": reply}]
        turns.append({"role": "user", "content": r.question})
    else:
        turns.append({"role": "user", "content": r.text})
    return [*turns, {"role": "assistant", "content": r.prefix}]


class _Essay:
    """Filler sentences for essay haystacks, shared by every case of a (task, length)."""

    def __init__(self, haystack: str | None) -> None:
        self.haystack = haystack
        self._lists: OrderedDict[tuple[int, str | None], tuple[list[str], Iterator[str]]] = OrderedDict()

    def take(self, seed: int, folder: str | None = None) -> Callable[[int], list[str]]:
        key = (seed, folder or self.haystack)
        if key not in self._lists:
            self._lists[key] = ([], filler_source(key[1], seed))
            while len(self._lists) > 4:
                self._lists.popitem(last=False)
        sents, source = self._lists[key]

        def first(n: int) -> list[str]:
            while len(sents) < n:
                sents.append(next(source))
            return sents[:n]
        return first


def fit(render: Callable[[int], Rendered], count: Callable[[Rendered], int], budget: int,
        min_n: int, length: int) -> tuple[int, Rendered, int]:
    """Largest n ≥ min_n whose prompt counts ≤ budget tokens: interpolation on a bracket.

    RULER binary-searches with a full encode per step; the count is near-linear in n, so
    interpolating between the best fitting and the smallest failing n needs a few encodes."""
    def probe(n: int) -> tuple[int, Rendered]:
        r = render(n)
        return count(r), r

    lo = min_n
    c_lo, r_lo = probe(lo)
    if c_lo > budget:
        raise LengthTooShort(length, c_lo + (length - budget))
    hi: int | None = None
    c_hi = 0
    step_n = max(8, lo)
    c_step, _ = probe(lo + step_n)
    slope = max((c_step - c_lo) / step_n, 1e-3)
    for _ in range(_MAX_PROBES):
        if hi is not None and hi - lo <= 1:
            break
        guess = lo + max(1, int((budget - c_lo) / slope))
        if hi is not None:
            guess = min(max(guess, lo + 1), hi - 1)
            if guess in (lo + 1, hi - 1) and hi - lo > 4:
                guess = (lo + hi) // 2 if (budget - c_lo) / slope > (hi - lo) / 2 else guess
        c, r = probe(guess)
        if c <= budget:
            lo, c_lo, r_lo = guess, c, r
        else:
            hi, c_hi = guess, c
        if hi is not None and hi > lo:
            slope = max((c_hi - c_lo) / (hi - lo), 1e-3)
    return lo, r_lo, c_lo


_TOKEN = re.compile(r"[\w-]+")


def tokens_of(text: str) -> set[str]:
    """Whole tokens (runs of letters, digits, ``_`` and ``-``), lowercased."""
    return {t.lower() for t in _TOKEN.findall(text)}


def _said(reference: str, said: set[str], output: str) -> bool:
    """``reference`` appears in the output as whole tokens (a phrase: as a whole phrase)."""
    if _TOKEN.fullmatch(reference):
        return reference.lower() in said
    return re.search(rf"(?<![\w-]){re.escape(reference)}(?![\w-])", output, re.IGNORECASE) is not None


class Ruler(FamilyBase):
    name = "ruler"
    params_model = RulerParams
    #: RULER's convention: a length holds the prompt *and* the generated tokens.
    length_includes_output = True

    @classmethod
    def output_budget(cls, params: Mapping[str, Any]) -> int | None:
        """RULER's own ``tokens_to_generate`` for the task (None for an unknown task name:
        validation says so)."""
        task = C.TASKS.get(str(params.get("task")))
        return int(C.BASE_TASKS[task["task"]]["tokens_to_generate"]) if task is not None else None

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._essay = _Essay(ctx.haystack)
        self._vt_examples: OrderedDict[tuple[int, int], VtExample] = OrderedDict()
        self._chat: bool | None = None

    def _templated(self) -> bool:
        """Whether the tokenizer renders a chat template (then RULER's model template applies)."""
        if self._chat is None:
            self._chat = self.ctx.tokenizer.chat_template_hash is not None
        return self._chat

    def _vt_example(self, seed: int, task: str, hops: int) -> VtExample:
        """RULER's one vt example per run (per task: each task is its own RULER run)."""
        key = (derive_seed(seed, self.name, "vt-example", task), hops)
        if key not in self._vt_examples:
            self._vt_examples[key] = VtExample.build(hops, key[0], self.ctx.tokenizer.count)
            while len(self._vt_examples) > 8:
                self._vt_examples.popitem(last=False)
        return self._vt_examples[key]

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, RulerParams)
        task = C.TASKS[params.task]
        base = C.BASE_TASKS[task["task"]]
        ttg = int(base["tokens_to_generate"])
        tok = self.ctx.tokenizer
        case_seed = derive_seed(seed, self.name, params.task, cell.length, cell.depth, rep)
        args = task["args"]
        if task["task"] == "niah":
            essay = self._essay.take(derive_seed(seed, self.name, "essay", params.task, cell.length), params.essay)
            gen: Niah | VariableTracking | CommonWords | FrequentWords | QuestionAnswering = \
                Niah(args, case_seed, cell.depth, essay)
        elif task["task"] == "variable_tracking":
            gen = VariableTracking(args, case_seed, self._vt_example(seed, params.task, args["num_hops"]))
        elif task["task"] == "common_words_extraction":
            gen = CommonWords(args, case_seed, cell.length)
        elif task["task"] == "freq_words_extraction":
            gen = FrequentWords(args, case_seed, cell.length, ttg)
        else:
            assert params.qa_file is not None
            gen = QuestionAnswering(load_qa(params.qa_file, args["dataset"]), case_seed, rep, params.qa_file)
        budget = cell.length - ttg
        encodes = 0
        fitting: tuple[int, list[Message], list[int]] | None = None  # the longest probe that fit

        chat = self._templated()

        def count(r: Rendered) -> int:
            nonlocal encodes, fitting
            probe = messages_for(r, chat)
            probe_ids = tok.encode_chat(probe)
            # full-prompt encodes: the search's calibration probes (min_n units, a few
            # more) are small next to the case and are not counted, as in the other families
            encodes += len(probe_ids) > budget // 2
            if len(probe_ids) <= budget and (fitting is None or len(probe_ids) > fitting[0]):
                fitting = (len(probe_ids), probe, probe_ids)
            return len(probe_ids)

        if isinstance(gen, FrequentWords):
            n, rendered, _ = gen.size(count, budget, cell.length)  # RULER's stepped word counts
        else:
            n, rendered, _ = fit(gen.render, count, budget, gen.min_n, cell.length)
        messages = messages_for(rendered, chat)
        if fitting is not None and fitting[1] == messages:
            ids = fitting[2]  # the search's own encode of this prompt
        else:
            ids = tok.encode_chat(messages)
            encodes += 1
        if task["task"] == "niah":
            self._check(rendered)
        meta: RulerMeta = {"ruler_task": params.task, "metric": base["metric"], "answer_prefix": rendered.prefix,
                           "tokens_to_generate": ttg, "haystack_units": n, "encodes": encodes, **rendered.meta}
        return Case(
            cell=cell, rep=rep, seed=case_seed, messages=messages, expected=rendered.answers,
            distractors=rendered.distractors,
            meta=meta,
            token_count=len(ids), realised_depth=self._realised_depth(rendered), prompt_ids=ids, max_tokens=ttg,
        )

    @staticmethod
    def _realised_depth(r: Rendered) -> float | None:
        needles = r.meta.get("needles")
        if not needles:
            return None
        at = r.text.find(needles[0])
        return round(at / max(1, len(r.text)), 6) if at >= 0 else None

    @staticmethod
    def _check(r: Rendered) -> None:
        """Each answer occurs once in the prompt, as the task placed it (a generation bug
        otherwise: fail loudly rather than score an ambiguous case)."""
        counts: dict[str, int] = {}
        for t in _TOKEN.findall(r.text):
            counts[t] = counts.get(t, 0) + 1
        for a in r.answers:
            if counts.get(a, 0) != 1:
                raise CtxprobeError(f"case generation check failed: answer {a!r} is not unique in the prompt")

    def score(self, case: Case, output: str) -> Scored:
        said = tokens_of(output)
        hits = [d for d in case.distractors if d.lower() in said]
        if hits:
            return Scored(0.0, "distractor", {"distractors": hits[:10]})
        found = {a: _said(a, said, output) for a in case.expected}
        if ruler_meta(case.meta).get("metric") == STRING_MATCH_PART:  # QA: the references are alternative answers
            share = 1.0 if any(found.values()) else 0.0
        else:
            share = sum(found.values()) / len(found) if found else 0.0
        if share == 1.0:
            return Scored(1.0, "correct", {"found": found})
        if share > 0:
            return Scored(share, "partial", {"found": found})
        return Scored(0.0, classify_miss(output), {"found": found})

