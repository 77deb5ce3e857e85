"""``mrcr``: multi-round co-reference resolution in a long conversation (OpenAI MRCR's shape).

A conversation of alternating user requests ``write a {format} about {topic}`` and
assistant replies (fresh procedural text in that format, :mod:`ctxprobe.families.mrcr.task_text`).
``needles`` (2, 4 or 8) requests share one format and topic (the key); every other request
differs from it in the format, the topic or both (``near_miss`` of them share one of the
two). The last user turn is

    Prepend {random string} to the {ordinal} (1 indexed) {format} about {topic}. Do not include any other text in your response.

and the answer is the string followed by that instance's reply.

Budget: the fully templated conversation (every message, the chat template's wrappers and
generation prompt) counts at most the cell length and at most
``max(0.5%, 16)`` tokens below it: whole distractor turns are added while they fit, then
the reply of the last one generated is cut at a word boundary to close the gap, each step
checked with one encode of the whole chat.

Depth: one needle (the asked one) sits at the turn boundary nearest the cell depth — the
share of the other turns' tokens before it; the other needles at depth-independent random
places. Its ordinal is its rank among the needles, so it changes with depth; every depth of
a (length, repetition) group holds the same turns. ``realised_depth`` is that share;
``needle_token_pos`` the token where the asked reply starts.

Scoring: ``score`` is OpenAI's rule (``rule: openai``, default) or Google MRCR v2's
last-occurrence rule (``rule: last-occurrence``); both are stored in the detail
(:mod:`ctxprobe.scores.originals`). The outcome is strict: ``correct`` only for the exact
reply after the string; ``distractor`` when the reply is closest to another instance of the
same key (ratio at least :data:`DISTRACTOR_RATIO`); ``partial`` when it starts with the
string and is closest to the asked one; otherwise a miss label.
"""

from __future__ import annotations

import difflib
import math
import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.core.case import Case, Cell, derive_seed
from ctxprobe.core.case_meta import case_meta, published_mrcr_meta
from ctxprobe.families.mrcr.task_meta import MrcrMeta, mrcr_meta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.haystack.packer import LengthTooShort
from ctxprobe.scores.classify import classify_miss
from ctxprobe.scores.originals import mrcr_v2_grade, openai_mrcr_grade
from ctxprobe.families.mrcr import task_text as text
from ctxprobe.haystack.context import BuildContext
from ctxprobe.tokenizers.base import Message

QUESTION = ("Prepend {prefix} to the {ordinal} (1 indexed) {format} about {topic}. "
            "Do not include any other text in your response.")
#: A reply closest to another instance of the key, at least this similar, is a distractor.
DISTRACTOR_RATIO = 0.6
_MAX_ROUNDS = 12


class MrcrParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    needles: Literal[2, 4, 8] = Field(2, description="requests sharing the asked format and topic")
    reply_words: int = Field(120, ge=20, le=2000, description="mean words per assistant reply (0.5x to 1.5x)")
    near_miss: float = Field(0.5, ge=0.0, le=1.0, description="share of other requests with the key's format or topic")
    rule: Literal["openai", "last-occurrence"] = Field("openai", description="which rule is the case score")
    prefix_chars: int = Field(10, ge=4, le=32, description="length of the random string to prepend")


def _messages(turns: list[tuple[str, str]], question: str) -> list[Message]:
    out: list[Message] = []
    for req, rep in turns:
        out += [{"role": "user", "content": req}, {"role": "assistant", "content": rep}]
    out.append({"role": "user", "content": question})
    return out


class Mrcr(FamilyBase):
    name = "mrcr"
    #: Google MRCR v2's noise floor: the score of returning a random instance of the key
    #: (:func:`random_instance_floor`), computed from each case; nothing more is sent.
    floor_kind = "random-instance"

    @classmethod
    def computed_floor(cls, case: Case) -> float:
        return random_instance_floor(case)
    params_model = MrcrParams

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx

    # -- generation ---------------------------------------------------------------------

    def _distractor(self, rng: random.Random, key: tuple[str, str], near_miss: float) -> tuple[str, str]:
        fmt, topic = key
        other_f = rng.choice([f for f in text.FORMATS if f != fmt])
        other_t = rng.choice([t for t in text.TOPICS if t != topic])
        if rng.random() < near_miss:
            return (fmt, other_t) if rng.random() < 0.5 else (other_f, topic)
        return other_f, other_t

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, MrcrParams)
        tok = self.ctx.tokenizer
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)
        key = (rng.choice(text.FORMATS), rng.choice(text.TOPICS))
        prefix = text.random_string(rng, params.prefix_chars)
        words = lambda: rng.randint(max(10, params.reply_words // 2), params.reply_words * 3 // 2)  # noqa: E731
        needles = [text.reply(rng.getrandbits(63), *key, words()) for _ in range(params.needles)]
        # where the other needles sit, as shares of the other turns (depth-independent)
        other_at = sorted(rng.random() for _ in range(params.needles - 1))
        request = text.request(*key)
        # a question with the longest ordinal it can have (sizes do not depend on depth)
        probe_q = QUESTION.format(prefix=prefix, ordinal=text.ordinal(params.needles), format=key[0], topic=key[1])
        base = tok.count_chat(_messages([(request, r) for r in needles], probe_q))
        if base > cell.length:
            raise LengthTooShort(cell.length, base)
        one = tok.count_chat(_messages([(request, needles[0])], probe_q))
        overhead = tok.count_chat(_messages([(request, needles[0])] * 2, probe_q)) - one \
            - tok.count(request) - tok.count(needles[0])

        # distractor turns while their summed cost fits; the last one's reply is then written
        # long and cut to the room left (the adjustable reply)
        distractors: list[tuple[str, str]] = []
        costs: list[int] = []
        room = cell.length - base
        while True:
            fmt, topic = self._distractor(rng, key, params.near_miss)
            rep_text = text.reply(rng.getrandbits(63), fmt, topic, words())
            req = text.request(fmt, topic)
            cost = tok.count(req) + tok.count(rep_text) + overhead
            if cost <= room:
                distractors.append((req, rep_text))
                costs.append(cost)
                room -= cost
                continue
            if room < tok.count(req) + overhead + 8 and distractors:  # too little room for a turn: reopen the last
                req, _ = distractors.pop()
                room += costs.pop()
            if room >= tok.count(req) + overhead + 8:
                distractors.append((req, text.reply(rng.getrandbits(63), *_parse(req), 3 * params.reply_words)))
                costs.append(0)
            break
        turns, asked_turn, messages, ids, realised = self._fit(cell, distractors, costs, needles, request,
                                                               other_at, prefix, key, overhead)
        question = messages[-1]["content"]
        ordinal = sum(1 for r, _ in turns[:asked_turn] if r == request) + 1
        instances = [rep_ for req_, rep_ in turns if req_ == request]
        pos = tok.count_chat(messages[: 2 * asked_turn + 1])  # the generation prompt ends where the reply starts
        self._check(messages, request, instances, prefix)
        answer = needles[0]
        answer_tokens = tok.count(prefix + answer)
        return Case(
            cell=cell,
            rep=rep,
            seed=group_seed,
            messages=messages,
            expected=[prefix + answer],
            distractors=[r for i, r in enumerate(instances) if i != ordinal - 1],
            meta=MrcrMeta(
                random_string_to_prepend=prefix,
                format=key[0],
                topic=key[1],
                n_needles=params.needles,
                ordinal=ordinal,
                desired_msg_index=2 * asked_turn + 1,
                total_messages=len(messages),
                turns=len(turns),
                question=question,
                rule=params.rule,
                answer_tokens=answer_tokens,
            ),
            token_count=len(ids),
            needle_token_pos=pos,
            realised_depth=round(realised, 6),
            prompt_ids=ids,
            max_tokens=answer_tokens + max(32, answer_tokens // 4),
        )

    def _arrange(self, distractors: list[tuple[str, str]], costs: list[int], needles: list[str], request: str,
                 other_at: list[float], depth: float, overhead: int) -> tuple[list[tuple[str, str]], int, float]:
        """The turns in order, the asked needle's turn index and its realised depth (the
        share of the other turns' summed tokens before it)."""
        tok = self.ctx.tokenizer
        rest: list[tuple[str, str]] = list(distractors)
        rest_costs = list(costs)
        if distractors:  # the adjustable reply, as it is now
            rest_costs[-1] = tok.count(distractors[-1][0]) + tok.count(distractors[-1][1]) + overhead
        needle_cost = [tok.count(request) + tok.count(n) + overhead for n in needles]
        for j, share in reversed(list(enumerate(other_at, start=1))):
            at = round(share * len(distractors))
            rest.insert(at, (request, needles[j]))
            rest_costs.insert(at, needle_cost[j])
        total = sum(rest_costs)
        before, best, best_gap, realised = 0, 0, float("inf"), 0.0
        for i in range(len(rest) + 1):
            share = before / total if total else 0.0
            if abs(share - depth) < best_gap:
                best, best_gap, realised = i, abs(share - depth), share
            if i < len(rest):
                before += rest_costs[i]
        return rest[:best] + [(request, needles[0])] + rest[best:], best, realised

    def _fit(self, cell: Cell, distractors: list[tuple[str, str]], costs: list[int], needles: list[str],
             request: str, other_at: list[float], prefix: str, key: tuple[str, str], overhead: int
             ) -> tuple[list[tuple[str, str]], int, list[Message], list[int], float]:
        """Cut the adjustable reply so the whole templated chat counts at most the length
        and less than the tolerance below it. Reply lengths are searched on the reply's
        own count; each candidate is checked with one encode of the whole chat."""
        tok = self.ctx.tokenizer
        target, tol = cell.length, fill_tolerance(cell.length)

        def build(n: int | None) -> tuple[list[tuple[str, str]], int, list[Message], list[int], float]:
            trial = list(distractors)
            if n is not None:
                trial[-1] = (trial[-1][0], text.cut_words(distractors[-1][1], n) or "Here it is.")
            turns, asked, realised = self._arrange(trial, costs, needles, request, other_at, cell.depth, overhead)
            ordinal = sum(1 for r, _ in turns[:asked] if r == request) + 1
            question = QUESTION.format(prefix=prefix, ordinal=text.ordinal(ordinal), format=key[0], topic=key[1])
            messages = _messages(turns, question)
            return turns, asked, messages, list(tok.encode_chat(messages)), realised

        if not distractors:
            built = build(None)
            if len(built[3]) > target:
                raise LengthTooShort(target, len(built[3]))
            return built
        long_text = distractors[-1][1]
        full = build(None)
        if len(full[3]) <= target:
            return full
        want = tok.count(long_text) - (len(full[3]) - target)  # reply tokens that would land on the length
        best = None
        tried: set[int] = set()
        for _ in range(_MAX_ROUNDS):
            n = _words_within(tok, long_text, want)
            if n in tried:
                break
            tried.add(n)
            built = build(n)
            got = len(built[3])
            if got <= target:
                if best is None or got > len(best[3]):
                    best = built
                if target - got < tol:
                    break
                want += target - got
            else:
                want -= got - target
        if best is None:
            raise LengthTooShort(target, target + 1)
        return best

    @staticmethod
    def _check(messages: list[Message], request: str, instances: list[str], prefix: str) -> None:
        """The key is requested exactly ``needles`` times, every request is one, the string
        and the replies occur only where placed (a generation bug otherwise: fail loudly)."""
        problems = []
        full = "\n\n".join(m["content"] for m in messages)
        if full.count(prefix) != 1:
            problems.append(f"the random string occurs {full.count(prefix)}x")
        for i, m in enumerate(messages[:-1]):
            is_request = text.REQUEST_RE.match(m["content"]) is not None
            if is_request != (m["role"] == "user"):
                problems.append(f"message {i} ({m['role']}) {'reads' if is_request else 'does not read'} as a request")
        if len(set(instances)) != len(instances):
            problems.append("two instances of the key have the same reply")
        if problems:
            raise CtxprobeError("case generation check failed: " + "; ".join(problems))

    # -- scoring ------------------------------------------------------------------------

    def score(self, case: Case, output: str) -> Scored:
        instances, asked, rule = case_instances(case)
        return grade(output, case.expected[0], str(mrcr_meta(case.meta)["random_string_to_prepend"]), instances, asked, rule)


def _parse(req: str) -> tuple[str, str]:
    m = text.REQUEST_RE.match(req)
    assert m is not None
    return m.group(1), m.group(2)


def _words_within(tok: Any, reply: str, budget: int) -> int:
    """Most leading words of ``reply`` whose own count is at most ``budget`` tokens."""
    lo, hi = 0, text.word_count(reply)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tok.count(text.cut_words(reply, mid)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def grade(output: str, answer: str, prefix: str, instances: list[str], asked: int, rule: str = "openai") -> Scored:
    """Both published scores, the instance the reply is closest to, and the strict outcome."""
    openai = openai_mrcr_grade(output, answer, prefix)
    last = mrcr_v2_grade(output, answer, hash_len=len(prefix))
    prefix_ok = output.startswith(prefix)
    body = (output.removeprefix(prefix) if prefix_ok else output).strip()
    ratios = [difflib.SequenceMatcher(None, body, inst.strip()).ratio() for inst in instances]
    closest = max(range(len(ratios)), key=lambda i: (ratios[i], i == asked)) if ratios else None
    score = openai if rule == "openai" else last
    detail: dict[str, Any] = {"openai": round(openai, 9), "last_occurrence": round(last, 9), "rule": rule,
                              "prefix_ok": prefix_ok, "asked": asked + 1,
                              "closest": None if closest is None else closest + 1,
                              "ratios": [round(r, 4) for r in ratios]}
    if prefix_ok and body == answer.removeprefix(prefix).strip():
        return Scored(score, Outcome.CORRECT, detail)
    if closest is not None and closest != asked and ratios[closest] >= DISTRACTOR_RATIO:
        return Scored(score, Outcome.DISTRACTOR, detail)
    if prefix_ok and body:
        return Scored(score, Outcome.PARTIAL, detail)
    return Scored(score, classify_miss(output), detail)


def case_instances(case: Case) -> tuple[list[str], int, str]:
    """Every instance of the asked key (the replies to the same request), the asked one's
    index among them, and the rule that is the case score. Generated cases keep the other
    instances as distractors; a row of the published ``openai/mrcr`` set has them in its
    conversation (the assistant replies to the same request as the asked one) and is
    scored by OpenAI's rule."""
    if case_meta(case.meta).get("source") != "openai/mrcr":
        meta = mrcr_meta(case.meta)
        prefix = str(meta["random_string_to_prepend"])
        instances = list(case.distractors)
        instances.insert(int(meta["ordinal"]) - 1, case.expected[0].removeprefix(prefix))
        return instances, int(meta["ordinal"]) - 1, str(meta.get("rule", "openai"))
    published = published_mrcr_meta(case.meta)
    prefix = str(published["random_string_to_prepend"])
    want = int(published["desired_msg_index"])
    request = case.messages[want - 1]["content"] if want >= 1 else None
    idx = [i for i in range(1, len(case.messages) - 1)
           if case.messages[i].get("role") == "assistant" and case.messages[i - 1]["content"] == request]
    instances = [str(case.messages[i]["content"]) for i in idx]
    asked = idx.index(want) if want in idx else 0
    if not instances:
        instances, asked = [case.expected[0].removeprefix(prefix)], 0
    return instances, asked, "openai"


def random_instance_floor(case: Case) -> float:
    """Google MRCR v2's noise floor for one case: the expected case score of a reply that
    is the random string followed by an instance of the asked key drawn uniformly (the
    asked one included) -- what a model that finds the key but not the ordinal scores."""
    instances, asked, rule = case_instances(case)
    prefix = str(mrcr_meta(case.meta)["random_string_to_prepend"])
    scores = [grade(prefix + inst, case.expected[0], prefix, instances, asked, rule).score for inst in instances]
    return math.fsum(scores) / len(scores)
