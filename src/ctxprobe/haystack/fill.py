"""Choosing the filler for a token budget: whole sentences, then shorter later ones, then
one sentence trimmed at a word boundary, so a case lands within :func:`fill_tolerance` of
its target with any haystack (a user's text has 60-token sentences next to 2-token
headings; built-in prose has 8-30 words per sentence).

The selection is a pure function of the pool and the budget, so every depth of a group
(same budget) gets the same filler, in the same order: prefix sharing is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ctxprobe.haystack.counting import count_many
from ctxprobe.haystack.pool import FillerPool
from ctxprobe.tokenizers.base import Tokenizer

#: Later sentences scanned for one short enough to fill what whole sentences leave.
LOOKAHEAD = 64
#: Words of a sentence considered for trimming (longer sentences are cut within these).
_TRIM_WORDS = 120


def fill_tolerance(target: int) -> int:
    """How far below its target a case may land: max(0.5% of the target, 16 tokens)."""
    return max(math.ceil(0.005 * target), 16)


@dataclass
class Filler:
    """The chosen filler: the pool's first ``n`` sentences, then ``tail`` (later sentences
    taken out of order, and possibly one trimmed sentence), with counts and prefix sums."""

    sentences: list[str]
    counts: list[int]
    n: int  # how many come from the pool's prefix
    trimmed: bool = False
    _prefix: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self._prefix:
            acc = [0]
            for c in self.counts:
                acc.append(acc[-1] + c)
            self._prefix = acc

    def tokens(self, i: int) -> int:
        return self._prefix[i]

    @property
    def total(self) -> int:
        return self._prefix[-1]


def trim(tokenizer: Tokenizer, sentence: str, budget: int) -> tuple[str, int] | None:
    """The word-prefix of ``sentence`` (closed with a full stop, never the whole sentence)
    with the most tokens as ``' ' + text`` within ``budget``, the shortest of equal counts;
    None when not even one word fits."""
    words = sentence.split(" ")[:_TRIM_WORDS]
    if len(words) < 2 or budget <= 0:
        return None
    heads = [" ".join(words[:k]).rstrip(",;:-") + "." for k in range(1, len(words))]
    heads = [h for h in heads if h != "."]
    counts = count_many(tokenizer, [" " + h for h in heads])
    best: tuple[str, int] | None = None
    for h, c in zip(heads, counts):
        if c <= budget and (best is None or c > best[1]):
            best = (h, c)
    return best


def select(pool: FillerPool, tokenizer: Tokenizer, budget: int, tolerance: int) -> Filler:
    """Filler of at most ``budget`` summed tokens, as close to it as whole sentences, later
    shorter sentences and (when more than half the tolerance is still unfilled) one trimmed
    sentence allow."""
    n = pool.fit(budget)
    rem = budget - pool.tokens(n)
    sentences, counts = pool.sentences[:n], pool.counts[:n]
    j = n
    while rem > 0 and j < n + LOOKAHEAD:
        c = pool.count(j)
        if c <= rem:
            sentences.append(pool.sentences[j])
            counts.append(c)
            rem -= c
        j += 1
    trimmed = False
    if rem > tolerance // 2:
        cut = trim(tokenizer, pool.sentences[n] if n < len(pool.sentences) else "", rem)
        if cut is not None:
            sentences.append(cut[0])
            counts.append(cut[1])
            trimmed = True
    return Filler(sentences, counts, n, trimmed)
