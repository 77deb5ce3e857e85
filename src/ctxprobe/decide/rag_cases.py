"""Retrieval-shaped cases for ``decide --rag --confirm``: what a product's prompt holds
after retrieval.

One case is k chunks of about the chunk size each: the chunk holding the answer ("The
special magic number for KEY is VALUE.") among k − 1 near-miss chunks, each stating a
look-alike (the asked key's words with another number, and another value). Chunks are
seeded filler (or the user's own document chunks), the statement in each chunk's middle.
The answer's retrieval rank r is drawn with P(r) ∝ 1/r over 1..k (a retriever that
usually, not always, ranks it first); the chunks are placed by rank into slots ordered by
preference: for ``edges`` (first edge ``start``) the slots are first, last, second,
second-to-last, …; for ``end`` the mirror image; for ``any`` the ranked order. The
*reversed* arrangement gives rank i the slot k + 1 − i (the top-ranked chunk in the least
preferred slot). The case at 2k keeps the same k chunks and ranks and adds k lower-ranked
near-misses. Everything is drawn from the case's seed: the arms are paired case by case.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxprobe.haystack import filler_source
from ctxprobe.tokenizers.base import Message

__all__ = ["RetrievalCase", "build_case", "slots", "score_answer"]

INSTRUCTION = ("Passages retrieved for your question follow. Each states a special magic number tied to a key. "
               "Find the one you are asked about.")
QUESTION = "What is the special magic number for {key} mentioned in the passages above? Answer with the number only."
STATEMENT = "The special magic number for {key} is {value}."
_WORDS = (("quiet", "amber", "brisk", "candid", "dusty", "eager", "fragile", "gentle", "hollow", "jagged"),
          ("harbor", "lantern", "meadow", "orchard", "pebble", "quarry", "ribbon", "saddle", "thicket", "willow"))


@dataclass(frozen=True)
class RetrievalCase:
    messages: list[Message]
    expected: str
    near_misses: tuple[str, ...]
    answer_rank: int
    answer_slot: int
    chunks: int


def slots(k: int, order: str, first_edge: str | None, *, reverse: bool = False) -> list[int]:
    """Position (0-based) of rank 1..k: ranked order, or the edges first (module docstring)."""
    if order == "edges":
        pref: list[int] = []
        lo, hi = 0, k - 1
        while lo <= hi:
            pref.append(lo if first_edge != "end" else hi)
            if lo != hi:
                pref.append(hi if first_edge != "end" else lo)
            lo, hi = lo + 1, hi - 1
    else:
        pref = list(range(k))
    return pref[::-1] if reverse else pref


def _rank(rng: random.Random, k: int) -> int:
    weights = [1.0 / r for r in range(1, k + 1)]
    return rng.choices(range(1, k + 1), weights)[0]


def _chunk(sentences: Sequence[str], statement: str, tokens: int, count: Callable[[str], int]) -> str:
    """Filler sentences to about ``tokens`` with ``statement`` in the middle."""
    budget = max(0, tokens - count(" " + statement))
    picked: list[str] = []
    used = 0
    for s in sentences:
        if used >= budget:
            break
        picked.append(s)
        used += count(" " + s)
    mid = len(picked) // 2
    return " ".join([*picked[:mid], statement, *picked[mid:]])


def build_case(seed: int, k: int, tokens: int, order: str, first_edge: str | None, count: Callable[[str], int], *,
               reverse: bool = False, extra: int = 0, docs: Sequence[str] = ()) -> RetrievalCase:
    """The case of ``seed`` with k chunks (+ ``extra`` lower-ranked near-misses: the 2k arm)."""
    rng = random.Random(seed)
    stem = f"{rng.choice(_WORDS[0])}-{rng.choice(_WORDS[1])}"
    if extra > k:
        raise ValueError("the longer arm adds at most k near-misses")
    numbers = rng.sample(range(100, 1000), 2 * k + 1)  # as many for every arm: the arms share their draws
    values = [str(v) for v in rng.sample(range(1_000_000, 10_000_000), 2 * k + 1)]
    keys = [f"{stem}-{n}" for n in numbers]
    answer_rank = _rank(rng, k)
    total = k + extra
    statements = [STATEMENT.format(key=keys[i], value=values[i]) for i in range(total)]
    # rank r's statement: the answer (index 0) at its rank, near-misses at the others
    by_rank = {answer_rank: 0}
    others = iter(range(1, total))
    for r in range(1, total + 1):
        if r not in by_rank:
            by_rank[r] = next(others)
    filler = filler_source(None, seed)
    texts = []
    for r in range(1, total + 1):
        if docs:
            doc = docs[rng.randrange(len(docs))]
            body = doc.split(". ")
            texts.append(_chunk(body, statements[by_rank[r]], tokens, count))
        else:
            sentences = [next(filler) for _ in range(max(4, tokens // 8))]
            texts.append(_chunk(sentences, statements[by_rank[r]], tokens, count))
    place = slots(total, order, first_edge, reverse=reverse)
    arranged: list[str] = [""] * total
    for r in range(1, total + 1):
        arranged[place[r - 1]] = texts[r - 1]
    content = "\n\n".join([INSTRUCTION, *arranged, QUESTION.format(key=keys[0])])
    return RetrievalCase([{"role": "user", "content": content}], values[0], tuple(values[1:total]), answer_rank,
                         place[answer_rank - 1], total)


def score_answer(case: RetrievalCase, output: str) -> bool:
    """Strict, as ``niah``: the value, and no near-miss's value."""
    def has(v: str) -> bool:
        return re.search(rf"(?<!\d){v}(?!\d)", output) is not None

    return has(case.expected) and not any(has(v) for v in case.near_misses)
