"""The word-count cache one rule at a time, with a tokenizer written here whose counts are
known by eye: how many sentences are checked before the cache is trusted, which sentences
are always counted whole, what each path costs in tokenizer calls, and the cache's
lifetime per tokenizer (weakly held, or held by id when the tokenizer cannot be)."""

from __future__ import annotations

import re

import pytest

from ctxprobe.haystack.counting import clear_word_counts, count_sentences, word_counts
from ctxprobe.tokenizers.base import TokenizerBase

# pieces of up to three characters, each with the whitespace run before it; whitespace
# that no piece follows is one token. Additive at single spaces, not at double ones:
# " a  b" is 2 tokens whole (" a", "  b") but 3 summed by word (" a", " ", " b").
_PIECE = re.compile(r"\s*[^\s]{1,3}|\s+")


class Pieces(TokenizerBase):
    """Counts pieces; ``odd`` adds a token to any multi-word text holding the word "Odd"
    (a merge the word sums cannot see). Records every batched call's texts."""

    name = "pieces"

    def __init__(self, odd: bool = False) -> None:
        self.odd = odd
        self.many: list[list[str]] = []  # count_many calls (whole sentences)
        self.segments: list[list[str]] = []  # count_segments calls (words)

    def count(self, text: str) -> int:
        extra = self.odd and "Odd" in text.split() and len(text.split()) > 1
        return len(_PIECE.findall(text)) + extra

    def count_many(self, texts: list[str]) -> list[int]:
        self.many.append(list(texts))
        return [self.count(t) for t in texts]

    def count_segments(self, texts: list[str]) -> list[int]:
        self.segments.append(list(texts))
        return [self.count(t) for t in texts]


class Slotted:
    """A tokenizer that cannot be weakly referenced (``__slots__``, no ``__weakref__``)."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls = 0

    def count_many(self, texts: list[str]) -> list[int]:
        self.calls += 1
        return [len(_PIECE.findall(t)) for t in texts]

    def count_segments(self, texts: list[str]) -> list[int]:
        return self.count_many(texts)


def plain(k: int) -> list[str]:
    return [f"Word{i} two three." for i in range(k)]


def truth(tok: Pieces, sentences: list[str]) -> list[int]:
    return [tok.count(" " + s) for s in sentences]


@pytest.mark.parametrize("at, trusted", [(63, False), (64, True)])
def test_the_first_64_summable_sentences_are_checked(at: int, trusted: bool) -> None:
    """A disagreement among the first 64 sentences turns the cache off; the 65th is not
    checked (the cache is trusted and that one sentence is summed, one token short)."""
    tok = Pieces(odd=True)
    sentences = plain(100)
    sentences[at] = "Odd one out."
    got = count_sentences(tok, sentences)
    assert word_counts(tok).enabled is trusted
    want = truth(tok, sentences)
    if trusted:
        assert got[at] == want[at] - 1 and got[:at] == want[:at] and got[at + 1:] == want[at + 1:]
    else:
        assert got == want


@pytest.mark.parametrize("odd", [True, False])
def test_the_check_skips_sentences_counted_whole(odd: bool) -> None:
    """Sentences with other whitespace than single inner spaces are not in the sample (the
    cache would be off at once): with ten of them first, the disagreeing sentence at index
    70 is the 61st checked."""
    tok = Pieces(odd=True)
    sentences = [f"Gap{i}  here." for i in range(10)] + plain(90)
    if odd:
        sentences[70] = "Odd one out."
    assert count_sentences(tok, sentences) == truth(tok, sentences)
    assert word_counts(tok).enabled is not odd


def test_what_each_path_costs() -> None:
    tok = Pieces()
    wc = word_counts(tok)
    sentences = ["Alpha beta gamma.", "Beta gamma alpha.", "Two  spaces.", "Alpha."]
    assert count_sentences(tok, sentences) == truth(tok, sentences)
    assert wc.enabled is True
    # words: each distinct one counted once, in one call
    assert tok.segments == [[" Alpha", " beta", " gamma.", " Beta", " gamma", " alpha.", " Alpha."]]
    assert wc.word_calls == 7 and wc.words["gamma."] == 2
    # the check (the three summable sentences), then the one counted whole
    assert tok.many == [[" Alpha beta gamma.", " Beta gamma alpha.", " Alpha."], [" Two  spaces."]]
    assert wc.sentence_texts == 3 + 1
    # checked once: later calls sum cached words and count only new words and odd sentences
    tok.many.clear()
    tok.segments.clear()
    assert count_sentences(tok, ["Alpha beta delta.", "Beta alpha."]) == [6, 4]
    assert tok.segments == [[" delta."]] and tok.many == []  # nothing counted whole: no call at all
    assert wc.word_calls == 8 and wc.sentence_texts == 4
    assert count_sentences(tok, ["Beta alpha."]) == [4] and tok.segments == [[" delta."]]  # all cached


def test_a_first_batch_with_nothing_summable_leaves_the_cache_unchecked() -> None:
    tok = Pieces(odd=True)
    assert count_sentences(tok, ["Odd  one.", "Two\tthree."]) == [tok.count(" Odd  one."), tok.count(" Two\tthree.")]
    assert word_counts(tok).enabled is None  # nothing checked yet
    sentences = plain(5) + ["Odd one out."]
    assert count_sentences(tok, sentences) == truth(tok, sentences)
    assert word_counts(tok).enabled is False


def test_a_disabled_cache_counts_whole_sentences_and_forgets_its_words() -> None:
    tok = Pieces(odd=True)
    wc = word_counts(tok)
    first = plain(3) + ["Odd one out."]
    assert count_sentences(tok, first) == truth(tok, first)
    assert wc.enabled is False and wc.words == {}
    assert wc.sentence_texts == 4 + 4  # the check of four, then all four counted whole
    tok.many.clear()
    tok.segments.clear()
    later = ["Odd two.", "Plain words here."]
    assert count_sentences(tok, later) == truth(tok, later)
    assert tok.many == [[" Odd two.", " Plain words here."]] and tok.segments == []
    assert wc.sentence_texts == 8 + 2 and wc.enabled is False


def test_an_empty_batch_costs_nothing() -> None:
    tok = Pieces()
    assert count_sentences(tok, []) == []
    assert tok.many == tok.segments == [] and word_counts(tok).enabled is None


@pytest.mark.parametrize("sentence", [
    "Two  spaces.", " Leading space.", "Trailing space. ", "A tab\there.", "Line\nbreak here.", "Tab\t then.",
    "Space \tthen.", "",
])
def test_other_whitespace_is_counted_whole(sentence: str) -> None:
    """With a tokenizer that merges whitespace runs into the next piece, a word sum would be
    wrong for each of these: they are counted as whole sentences."""
    tok = Pieces()
    count_sentences(tok, plain(3))  # the check passes: the cache is on
    assert word_counts(tok).enabled is True
    tok.many.clear()
    assert count_sentences(tok, [sentence, "Alpha beta."]) == [tok.count(" " + sentence), 4]
    assert tok.many == [[" " + sentence]]


def test_caches_are_per_tokenizer_and_cleared_one_or_all() -> None:
    a, b = Pieces(), Pieces()
    assert word_counts(a) is word_counts(a) and word_counts(a) is not word_counts(b)
    count_sentences(a, plain(2))
    count_sentences(b, plain(2))
    wa, wb = word_counts(a), word_counts(b)
    clear_word_counts(a)
    assert word_counts(a) is not wa and word_counts(a).enabled is None
    assert word_counts(b) is wb and wb.enabled is True  # the other tokenizer's cache is kept
    clear_word_counts()
    assert word_counts(b) is not wb


def test_a_tokenizer_that_cannot_be_weakly_referenced_is_held_by_id() -> None:
    s, t = Slotted(), Slotted()
    with pytest.raises(TypeError):
        import weakref

        weakref.ref(s)
    ws = word_counts(s)
    assert word_counts(s) is ws and word_counts(t) is not ws
    count_sentences(s, plain(3))
    assert ws.enabled is True and ws.words
    calls = s.calls
    assert count_sentences(s, plain(3)) == [len(_PIECE.findall(" " + x)) for x in plain(3)]
    assert s.calls == calls  # every word cached
    clear_word_counts(s)
    assert word_counts(s) is not ws and word_counts(s).enabled is None
    wt = word_counts(t)
    clear_word_counts()
    assert word_counts(t) is not wt


def test_a_sentence_of_hundreds_of_tokens_passes_the_check() -> None:
    """Counts are compared by value: a 300-word sentence's sum (300 tokens, an int CPython
    does not cache) agrees with its whole count."""
    tok = Pieces()
    long = " ".join(["ab"] * 299) + " cd."
    assert count_sentences(tok, [long]) == [300]
    assert word_counts(tok).enabled is True
