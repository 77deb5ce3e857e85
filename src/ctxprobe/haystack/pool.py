"""The filler pool: a source's sentences with their token counts, extended on demand.

It sits below both the filler's selection (:mod:`ctxprobe.haystack.fill`) and the packer
(:mod:`ctxprobe.haystack.packer`), which both read it, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Iterator

from ctxprobe.haystack.counting import count_sentences
from ctxprobe.tokenizers.base import Tokenizer

#: Sentences counted at once when the pool grows.
_BATCH = 256


class FillerPool:
    """Filler sentences from a source with their token counts, extended on demand.

    One pool serves every depth of a (length, repetition) group, so those cases share
    their filler (a paired design that isolates depth, and lets prefix caches hit)."""

    def __init__(self, source: Iterator[str], tokenizer: Tokenizer) -> None:
        self._source = source
        self._tokenizer = tokenizer
        self.sentences: list[str] = []
        self.counts: list[int] = []
        self._prefix: list[int] = [0]  # prefix sums of counts

    def _extend(self, at_least: int) -> None:
        while len(self.sentences) < at_least:
            batch = [next(self._source) for _ in range(_BATCH)]
            counts = count_sentences(self._tokenizer, batch)
            for s, c in zip(batch, counts):
                self.sentences.append(s)
                self.counts.append(c)
                self._prefix.append(self._prefix[-1] + c)

    def count(self, i: int) -> int:
        self._extend(i + 1)
        return self.counts[i]

    def tokens(self, n: int) -> int:
        """Summed counts of the first ``n`` sentences."""
        self._extend(n)
        return self._prefix[n]

    def fit(self, budget: int) -> int:
        """Largest n whose first n sentences sum to at most ``budget`` tokens."""
        if budget <= 0:
            return 0
        while self._prefix[-1] <= budget:
            self._extend(len(self.sentences) + _BATCH)
        # prefix is non-decreasing: binary search over it (cheap, no tokenizing)
        lo, hi = 0, len(self._prefix) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._prefix[mid] <= budget:
                lo = mid
            else:
                hi = mid - 1
        return lo
