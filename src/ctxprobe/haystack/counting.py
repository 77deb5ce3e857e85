"""Counting filler sentences fast: a per-tokenizer cache of space-led word counts.

The packer needs the token count of every filler sentence as it tokenizes inside the
joined haystack (``' ' + sentence``). Counting each sentence in its own tokenizer call
costs more than encoding the whole prompt once (llama.cpp spends ~20 µs per call before
it reads a byte), so a cold case used to tokenize ~2× its target.

Every tokenizer ctxprobe ships pre-splits text before a space that follows a non-space
character (GPT-2/Llama-3/tiktoken regexes: ``' ?\\p{L}+'``, ``' ?[^\\s\\p{L}\\p{N}]+'``...;
SentencePiece splits at ``'▁'``): no token spans such a boundary, so ``' ' + sentence``
counts as the sum of its words counted as ``' ' + word``. Words repeat (built-in prose has
a few thousand distinct ones, a user's text a few tens of thousands), so each distinct word
is counted once per tokenizer and process, in one batched call, and reused across every
case, depth, length and repetition.

The property is checked, not assumed: the first sentences a tokenizer meets are counted
both ways, and a tokenizer where the sums disagree (a SentencePiece dummy prefix, an
approximate counter) goes back to one count per sentence for the rest of the process. A
sentence with other whitespace than single spaces is always counted whole. Nothing here
weakens exactness: the packer's one encode of the final prompt still verifies every case.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ctxprobe.tokenizers.base import Tokenizer

#: Sentences counted both ways before the word cache is trusted for a tokenizer.
CHECK_SENTENCES = 64


def count_many(tokenizer: Tokenizer, texts: list[str]) -> list[int]:
    return list(tokenizer.count_many(texts))


class WordCounts:
    """Counts of ``' ' + word`` for one tokenizer; ``enabled`` is None until checked."""

    def __init__(self) -> None:
        self.words: dict[str, int] = {}
        self.enabled: bool | None = None
        self.lock = threading.Lock()
        #: Tokenizer calls spent on words and on whole sentences (for benchmarks).
        self.word_calls = 0
        self.sentence_texts = 0


_CACHES: weakref.WeakKeyDictionary[Any, WordCounts] = weakref.WeakKeyDictionary()
_STRONG: dict[int, tuple[Any, WordCounts]] = {}  # tokenizers that cannot be weakly referenced
_CACHES_LOCK = threading.Lock()


def word_counts(tokenizer: Tokenizer) -> WordCounts:
    with _CACHES_LOCK:
        try:
            wc = _CACHES.get(tokenizer)
            if wc is None:
                wc = _CACHES[tokenizer] = WordCounts()
            return wc
        except TypeError:
            held = _STRONG.get(id(tokenizer))
            if held is None or held[0] is not tokenizer:
                held = _STRONG[id(tokenizer)] = (tokenizer, WordCounts())
            return held[1]


def clear_word_counts(tokenizer: Tokenizer | None = None) -> None:
    """Forget cached word counts (all tokenizers, or one): a benchmark's cold start."""
    with _CACHES_LOCK:
        if tokenizer is None:
            _CACHES.clear()
            _STRONG.clear()
            return
        try:
            _CACHES.pop(tokenizer, None)
        except TypeError:
            _STRONG.pop(id(tokenizer), None)


def _words(sentence: str) -> list[str] | None:
    """The space-separated words, or None when the sentence holds any whitespace other than
    single inner spaces (then the space-boundary argument is not made for it)."""
    words = sentence.split()
    if not words or " ".join(words) != sentence:
        return None
    return words


def _sum_words(wc: WordCounts, tokenizer: Tokenizer, split: list[list[str] | None]) -> list[int | None]:
    cache = wc.words
    unknown: dict[str, None] = {}
    for words in split:
        if words is not None:
            for w in words:
                if w not in cache:
                    unknown[w] = None
    if unknown:
        new = list(unknown)
        wc.word_calls += len(new)
        texts = [" " + w for w in new]
        cache.update(zip(new, tokenizer.count_segments(texts)))
    return [None if words is None else sum([cache[w] for w in words]) for words in split]


def count_sentences(tokenizer: Tokenizer, sentences: list[str]) -> list[int]:
    """``count(' ' + s)`` for every sentence, from cached word counts where that is exact
    for this tokenizer (see module docstring)."""
    if not sentences:
        return []
    wc = word_counts(tokenizer)
    with wc.lock:
        if wc.enabled is False:
            wc.sentence_texts += len(sentences)
            return count_many(tokenizer, [" " + s for s in sentences])
        split = [_words(s) for s in sentences]
        sums = _sum_words(wc, tokenizer, split)
        if wc.enabled is None:
            sample = [i for i, s in enumerate(split) if s is not None][:CHECK_SENTENCES]
            if sample:
                truth = count_many(tokenizer, [" " + sentences[i] for i in sample])
                wc.sentence_texts += len(sample)
                wc.enabled = all(sums[i] == t for i, t in zip(sample, truth))
                if not wc.enabled:
                    wc.words.clear()
                    wc.sentence_texts += len(sentences)
                    return count_many(tokenizer, [" " + s for s in sentences])
        whole = [i for i, s in enumerate(sums) if s is None]
        counted: dict[int, int] = {}
        if whole:
            wc.sentence_texts += len(whole)
            counted = dict(zip(whole, count_many(tokenizer, [" " + sentences[i] for i in whole])))
        return [int(s) if s is not None else counted[i] for i, s in enumerate(sums)]
