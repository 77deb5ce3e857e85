"""``aggregation``: which words are the most frequent in a long list? The answer depends on
counting over the whole context, not on finding one sentence.

Design (RULER's ``cwe`` and ``fwe``). As in RULER, the
word list *is* the context: no filler is used (filler words would compete in the count).
Words are random pronounceable non-words (``bakotu``, ``mirelavo``), fresh per case,
never one of the prose filler's words, and never in the instruction or question.

Variants:

``common-words`` (cwe)
    ``top`` common words (default 10) each occur ``common_freq`` times (default 30) among
    many rare words that occur ``rare_freq`` times (default 3). At short lengths the common
    words are capped at a third of the list's tokens, lowering ``common_freq`` (never to
    ``rare_freq`` or below: such a length is refused).
``frequent-words`` (fwe)
    A Zipf-like distribution: the word of rank r occurs ``floor(C / r**alpha)`` times
    (``alpha`` default 2.0), C as large as the length allows; ``top`` defaults to 3.

Exact budget: each word is counted once (as ``' ' + word``), the designed list is sized
from those counts to just under the budget, and :func:`~ctxprobe.haystack.packer.pack`
tops it up with once-only words and verifies with one encode of the templated prompt.
The answer is then recomputed from the words actually in the prompt and must be
unambiguous: the k-th word's count strictly above the (k+1)-th's, or the case is refused.

Depth: the occurrences of the top-k words are concentrated in a window of ``window`` × the
list (default 0.5) centred on the cell depth (shifted to stay inside the list; widened
when the top words need more room, which at ``alpha`` 2 makes depth matter little); all
other words are spread over the whole list. ``window=1`` spreads everything uniformly
(RULER's design), leaving depth without effect. ``realised_depth`` is the mean position of
the top words' occurrences (token share of the list before them).

Scoring (:mod:`ctxprobe.scores.setscore`): the answered set is every word of the output that
occurs in the prompt's list; the score is its F1 against the true top-k (exact stored
beside it), so listing many list words never scores 1.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import prose
from ctxprobe.haystack.packer import FillerPool, count_many, pack
from ctxprobe.core.case import derive_seed, Case, Cell
from ctxprobe.families.aggregation.task_meta import AggregationMeta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Scored
from ctxprobe.haystack.context import BuildContext
from ctxprobe.spec import PromptLayout
from ctxprobe.haystack.layout import DEFAULT_LAYOUT, after_wording
from ctxprobe.haystack.layout import conversation, conversation_text, per_turn_tokens
from ctxprobe.scores.setscore import match_set, score_set
from ctxprobe.tokenizers.base import Message, Tokenizer

INSTRUCTION = (
    "Below is a list of made-up words. Some words occur more often than others; "
    "keep track of how often each one occurs."
)
QUESTION = (
    "What are the {k} most frequent words in the list above? "
    "Answer with the {k} words only, separated by commas."
)
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_WORD = re.compile(r"[a-z]+")
_LIST_PARAGRAPH = re.compile(r"[a-z]+(?: [a-z]+)*")
_VARIANT_KNOBS = {"common_freq": "common-words", "rare_freq": "common-words", "alpha": "frequent-words"}
#: Tokens left free below the budget so the designed list is never cut by the packer.
_SLACK_TOKENS = 8


class AggregationParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    variant: Literal["common-words", "frequent-words"] = Field("common-words", description="cwe or fwe")
    top: int | None = Field(None, ge=1, le=100, description="k words asked (default 10 cwe, 3 fwe)")
    common_freq: int = Field(30, ge=2, le=100_000, description="cwe: occurrences of each common word")
    rare_freq: int = Field(3, ge=1, le=100_000, description="cwe: occurrences of each rare word")
    alpha: float = Field(2.0, ge=0.5, le=4.0, description="fwe: Zipf exponent")
    window: float = Field(0.5, gt=0.0, le=1.0, description="share of the list holding the top words, centred on the depth")

    @model_validator(mode="after")
    def _check(self) -> AggregationParams:
        for knob, variant in _VARIANT_KNOBS.items():
            if knob in self.model_fields_set and self.variant != variant:
                raise CtxprobeError(f"aggregation parameter '{knob}' applies to variant={variant} only")
        if self.rare_freq >= self.common_freq:
            raise CtxprobeError("aggregation: rare_freq must be below common_freq")
        return self

    @property
    def k(self) -> int:
        return self.top if self.top is not None else default_k(self.variant)


def default_k(variant: str) -> int:
    """Words asked when ``top`` is not given: RULER's 10 for cwe, 3 for fwe."""
    return 10 if variant == "common-words" else 3


def render(haystack: str, k: int, layout: PromptLayout = DEFAULT_LAYOUT) -> list[Message]:
    return conversation(INSTRUCTION, haystack, QUESTION.format(k=k), layout)


@lru_cache(maxsize=1)
def filler_vocabulary() -> frozenset[str]:
    """Every word the prose generator's word lists can emit (inflected forms included)."""
    words: set[str] = set()

    def walk(x: object) -> None:
        if isinstance(x, str):
            words.update(_WORD.findall(x.lower()))
        elif isinstance(x, (tuple, list, set, frozenset)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(k)
                walk(v)

    for name, value in vars(prose).items():
        if name.startswith("_") and not callable(value):
            walk(value)
    return frozenset(words)


class WordSource:
    """Fresh non-words, never repeated within a case, counted in batches."""

    def __init__(self, rng: random.Random, tokenizer: Tokenizer, banned: set[str]) -> None:
        self.rng, self.tokenizer = rng, tokenizer
        self.taken = set(banned) | filler_vocabulary()

    def _word(self) -> str:
        while True:
            w = "".join(self.rng.choice(_CONSONANTS) + self.rng.choice(_VOWELS) for _ in range(self.rng.choice((3, 4))))
            if w not in self.taken:
                self.taken.add(w)
                return w

    def take(self, n: int) -> list[tuple[str, int]]:
        words = [self._word() for _ in range(n)]
        return list(zip(words, count_many(self.tokenizer, [" " + w for w in words])))

    def stream(self) -> Iterator[str]:
        while True:
            yield self._word()


def design_cwe(src: WordSource, p: AggregationParams, budget: int, length: int) -> dict[str, int]:
    k = p.k
    common = src.take(k)
    common_cost = sum(c for _, c in common)
    freq = min(p.common_freq, (budget // 3) // common_cost)
    if freq <= p.rare_freq:
        raise CtxprobeError(f"length {length} is too short for aggregation common-words with top={k} and "
                            f"rare_freq={p.rare_freq}; use longer lengths or lower top/rare_freq")
    counts = {w: freq for w, _ in common}
    left = budget - freq * common_cost
    while True:
        batch = src.take(64)
        for w, c in batch:
            if p.rare_freq * c > left:
                return counts
            counts[w] = p.rare_freq
            left -= p.rare_freq * c


def design_fwe(src: WordSource, p: AggregationParams, budget: int, length: int) -> dict[str, int]:
    ranked: list[tuple[str, int]] = []

    def cost(scale: int) -> int:
        total, r = 0, 1
        while (n := math.floor(scale / r**p.alpha)) >= 1:
            if r > len(ranked):
                ranked.extend(src.take(64))
            total += n * ranked[r - 1][1]
            if total > budget:  # every word costs a token or more: stop before r runs away
                break
            r += 1
        return total

    lo, hi = 0, max(1, budget)  # largest scale whose list fits the budget
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    counts = {w: math.floor(lo / (r + 1) ** p.alpha) for r, (w, _) in enumerate(ranked)}
    counts = {w: n for w, n in counts.items() if n >= 1}
    ranks = sorted(counts.values(), reverse=True) + [1]  # once-only words top the list up
    if len(counts) < p.k or ranks[p.k - 1] <= ranks[p.k]:
        raise CtxprobeError(f"length {length} is too short for aggregation frequent-words with top={p.k}; "
                            "use longer lengths or a lower top")
    return counts


def arrange(rng: random.Random, counts: dict[str, int], top: list[str], depth: float, window: float) -> tuple[list[str], tuple[int, int]]:
    """The list: top words' occurrences inside the depth window, the rest spread everywhere."""
    top_set = set(top)
    top_items = [w for w in top for _ in range(counts[w])]
    rest = [w for w, n in counts.items() if w not in top_set for _ in range(n)]
    rng.shuffle(top_items)
    rng.shuffle(rest)
    n = len(top_items) + len(rest)
    width = min(n, max(math.ceil(window * n), len(top_items)))
    start = min(max(round(depth * n - width / 2), 0), n - width)
    slots = set(rng.sample(range(start, start + width), len(top_items)))
    tops, others = iter(top_items), iter(rest)
    return [next(tops) if i in slots else next(others) for i in range(n)], (start, start + width)


def top_k(counts: Counter[str], k: int) -> list[str] | None:
    """The k most frequent words, or None when the k-th ties with the (k+1)-th."""
    ranked = counts.most_common()
    if len(ranked) < k or (len(ranked) > k and ranked[k - 1][1] <= ranked[k][1]):
        return None
    return [w for w, _ in ranked[:k]]


def list_words(text: str) -> list[str]:
    """Words of the paragraphs that are word lists (the instruction and question are not)."""
    return [w for para in text.split("\n\n") if _LIST_PARAGRAPH.fullmatch(para.strip()) for w in para.split()]


class Aggregation(FamilyBase):
    name = "aggregation"
    floor_kind = "no-context"
    params_model = AggregationParams

    @classmethod
    def answer_items(cls, params: Mapping[str, Any]) -> int:
        """The k words asked."""
        top = params.get("top")
        variant = params.get("variant", AggregationParams.model_fields["variant"].default)
        return int(top) if top is not None else default_k(str(variant))

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, AggregationParams)
        k, tok = params.k, self.ctx.tokenizer
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)  # counts and vocabulary are shared by every depth
        layout = self.ctx.layout  # the instruction moves; a list has no depth-0 needle to shield
        fixed_words = set(_WORD.findall((INSTRUCTION + QUESTION).lower()))
        if layout.instruction in ("after", "both"):
            fixed_words |= set(_WORD.findall(after_wording(INSTRUCTION).lower()))
        src = WordSource(rng, tok, fixed_words)
        budget = cell.length - tok.count_chat(render("", k, layout)) - max(_SLACK_TOKENS, math.ceil(0.002 * cell.length))
        if layout.messages != "single":  # each turn's wrapping takes list room (none in the default layout)
            budget -= per_turn_tokens(tok, lambda h: render(h, k, layout), layout) * (budget // layout.turn_tokens + 2)
        design = design_cwe if params.variant == "common-words" else design_fwe
        counts = design(src, params, budget, cell.length)
        top = sorted(counts, key=lambda w: -counts[w])[:k]
        if self.ctx.no_context:
            return self._no_context(cell, rep, group_seed, counts, top, src, params)
        # one arrangement seed per group: depths differ only in where the top words sit
        items, window = arrange(random.Random(derive_seed(group_seed, "arrange")), counts, top, cell.depth, params.window)

        def source() -> Iterator[str]:
            yield from items
            yield from src.stream()  # once-only words top the list up to the exact budget

        packed = pack(tok, lambda h: render(h, k, layout), FillerPool(source(), tok), [], cell.length)
        used = list_words(packed.haystack)
        actual = Counter(used)
        expected = top_k(actual, k)
        if expected is None or set(expected) != set(top) or packed.n_filler < len(items):
            raise CtxprobeError(f"case generation check failed: the top {k} words are not what was designed")
        _check_unique(conversation_text(packed.messages), actual)
        ranked = actual.most_common(k + 10)
        meta: AggregationMeta = {
            "variant": params.variant,
            "top": k,
            "question": QUESTION.format(k=k),
            "ranked": [[w, c] for w, c in ranked],
            "distinct_words": len(actual),
            "list_items": len(used),
            "window_items": list(window),
            "haystack_tokens": packed.haystack_tokens,
            "encodes": packed.encodes,
        }
        return Case(
            cell=cell,
            rep=rep,
            seed=group_seed,
            messages=packed.messages,
            expected=expected,
            distractors=[w for w, _ in ranked[k:]],
            meta=meta,
            token_count=packed.token_count,
            needle_token_pos=None,
            realised_depth=round(_mean_share(used, set(expected), tok), 6),
            prompt_ids=packed.prompt_ids,
        )

    def _no_context(self, cell: Cell, rep: int, group_seed: int, counts: dict[str, int], top: list[str],
                    src: WordSource, params: AggregationParams) -> Case:
        """The noise floor: the same words, each once (then once-only words to the budget),
        so no word is more frequent than another; the asked top words are the designed
        case's, and a guess scores about k over the list's distinct words."""
        tok, layout, k = self.ctx.tokenizer, self.ctx.layout, params.k
        words = list(counts)
        random.Random(derive_seed(group_seed, "no-context")).shuffle(words)

        def source() -> Iterator[str]:
            yield from words
            yield from src.stream()

        packed = pack(tok, lambda h: render(h, k, layout), FillerPool(source(), tok), [], cell.length)
        actual = Counter(list_words(packed.haystack))
        if max(actual.values(), default=0) > 1:
            raise CtxprobeError("case generation check failed: a no-context list repeats a word")
        return Case(cell=cell, rep=rep, seed=group_seed, messages=packed.messages, expected=list(top),
                    meta={"variant": params.variant, "top": k, "question": QUESTION.format(k=k), "no_context": True,
                          "distinct_words": len(actual), "haystack_tokens": packed.haystack_tokens,
                          "encodes": packed.encodes},
                    token_count=packed.token_count, prompt_ids=packed.prompt_ids)

    def score(self, case: Case, output: str) -> Scored:
        vocabulary = set(list_words(conversation_text(case.messages)))
        answered = [w for w in _WORD.findall(output.lower()) if w in vocabulary]
        match = match_set(case.expected, answered)
        got = set(match.hits)
        return score_set(match, output, case.distractors, per_word={w: w in got for w in case.expected})


def _mean_share(used: list[str], top: set[str], tok: Tokenizer) -> float:
    """Mean token share of the list before each occurrence of a top word."""
    distinct = list(dict.fromkeys(used))
    costs = dict(zip(distinct, count_many(tok, [" " + w for w in distinct])))
    before, total, positions = 0, sum(costs[w] for w in used), []
    for w in used:
        if w in top:
            positions.append(before)
        before += costs[w]
    return sum(positions) / len(positions) / total if positions and total else 0.0


def _check_unique(content: str, list_counts: Counter[str]) -> None:
    """Every list word occurs in the prompt exactly as often as in the list: never in the
    instruction or question (a generation bug otherwise: fail loudly)."""
    everywhere = Counter(w for w in _WORD.findall(content.lower()) if w in list_counts)
    if everywhere != list_counts:
        bad = [w for w in list_counts if everywhere[w] != list_counts[w]][:3]
        raise CtxprobeError(f"case generation check failed: list words also outside the list: {bad}")
