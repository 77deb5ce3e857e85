"""Choosing the filler for a budget, one rule at a time at its edges, with a tokenizer whose
counts are known by eye (pieces of up to three characters, a leading space joining the
first): how far ahead shorter sentences are looked for, when a later sentence fits, how a
sentence is trimmed, and that nothing more is counted than the rules need."""

from __future__ import annotations

import re

import pytest

from ctxprobe.haystack.fill import Filler, select, trim
from ctxprobe.haystack.packer import FillerPool
from ctxprobe.tokenizers.base import TokenizerBase


class Pieces(TokenizerBase):
    name = "pieces"

    def __init__(self) -> None:
        self.calls = 0

        self.batches: list[list[str]] = []

    def count(self, text: str) -> int:
        self.calls += 1
        return len(re.findall(r" ?[^\s]{1,3}|\s", text))

    def count_many(self, texts: list[str]) -> list[int]:
        self.batches.append(list(texts))
        return [self.count(t) for t in texts]


LONG = "Abc def ghi jkl mno pqr stu vwx yza bc."  # 10 tokens as ' ' + sentence
SHORT = "Ab cd."  # 2 tokens
ONE = "Ab."  # 1 token


def pool_of(sentences: list[str], then: str = LONG) -> FillerPool:
    tok = Pieces()
    return FillerPool(iter(sentences + [then] * 1_000), tok)


def test_the_counts_are_the_ones_assumed() -> None:
    tok = Pieces()
    assert [tok.count(" " + s) for s in (LONG, SHORT, ONE)] == [10, 2, 1]


@pytest.mark.parametrize("at, taken", [(65, True), (66, False)])
def test_shorter_sentences_are_looked_for_64_sentences_ahead(at: int, taken: bool) -> None:
    """Budget 27: two whole sentences (20), 7 left. Sentences 2..65 (64 of them) are scanned
    for one that fits; the short one at 66 is past the window (and 7 left is under half the
    tolerance: no trim)."""
    pool = pool_of([LONG] * at + [SHORT])
    chosen = select(pool, Pieces(), 27, 16)
    assert chosen.n == 2 and not chosen.trimmed
    assert (chosen.sentences[2:], chosen.total) == (([SHORT], 22) if taken else ([], 20))


def test_a_later_sentence_that_fills_the_gap_exactly_is_taken() -> None:
    chosen = select(pool_of([LONG, LONG, LONG, SHORT]), Pieces(), 22, 16)
    assert chosen.sentences[2:] == [SHORT] and chosen.total == 22 and chosen.counts == [10, 10, 2]


def test_a_one_token_gap_takes_a_one_token_sentence() -> None:
    chosen = select(pool_of([LONG, LONG, LONG, ONE]), Pieces(), 21, 16)
    assert chosen.sentences[2:] == [ONE] and chosen.total == 21


def test_each_later_sentence_taken_shrinks_the_gap() -> None:
    """6 left after two whole sentences: three 2-token sentences fill it, the fourth does not fit."""
    chosen = select(pool_of([LONG] * 3 + [SHORT] * 4), Pieces(), 26, 16)
    assert chosen.n == 2 and chosen.sentences[2:] == [SHORT] * 3 and chosen.total == 26
    assert chosen.counts == [10, 10, 2, 2, 2] and not chosen.trimmed


def test_a_budget_filled_by_whole_sentences_counts_nothing_further() -> None:
    """250 one-token sentences fill a budget of 250: the pool's first batch (256 counted) is
    all that is counted, no look-ahead past it."""
    pool = FillerPool(iter([ONE] * 2_000), Pieces())
    chosen = select(pool, Pieces(), 250, 16)
    assert chosen.total == 250 and chosen.n == 250 and chosen.sentences[250:] == []
    assert len(pool.sentences) == 256


def test_the_filler_prefix_sums() -> None:
    f = Filler(["a", "b", "c"], [3, 1, 2], 2)
    assert [f.tokens(i) for i in range(4)] == [0, 3, 4, 6] and f.total == 6 and not f.trimmed
    assert Filler([], [], 0).total == 0


def test_trim_keeps_a_two_word_sentence_s_first_word() -> None:
    tok = Pieces()
    assert trim(tok, "Abc def.", 5) == ("Abc.", 2) and tok.batches == [[" Abc."]]
    tok = Pieces()
    assert trim(tok, "Abcdef.", 5) is None and trim(tok, "", 5) is None
    assert tok.batches == []  # one word (or none): nothing shorter to keep, nothing counted


def test_trim_with_no_budget_counts_nothing() -> None:
    tok = Pieces()
    assert trim(tok, "Ab cd ef.", 0) is None and trim(tok, "Ab cd ef.", -3) is None
    assert tok.calls == 0 and tok.batches == []


def test_trim_to_one_token_keeps_one_short_word() -> None:
    assert trim(Pieces(), "Ab cd ef.", 1) == ("Ab.", 1)


def test_trim_never_returns_the_whole_sentence() -> None:
    assert trim(Pieces(), "Ab cd ef.", 100) == ("Ab cd.", 2)


def test_trim_looks_at_the_first_120_words_only() -> None:
    """Heads of 1..119 words of the first 120 (the 120th would be the whole window)."""
    words = ["ab"] * 200
    cut = trim(Pieces(), " ".join(words) + ".", 1_000)
    assert cut == (" ".join(["ab"] * 119) + ".", 119)


def test_trim_drops_a_head_that_would_be_a_bare_full_stop() -> None:
    """The first word '-' is stripped to nothing: '.' alone is not a sentence to add."""
    assert trim(Pieces(), "- ab cd.", 1) is None
    assert trim(Pieces(), "- ab cd.", 2) == ("- ab.", 2)


def test_trim_keeps_the_first_of_heads_with_equal_counts() -> None:
    # ' Abc.' and ' Abc de.' are both 2 tokens: the shorter head is kept
    assert trim(Pieces(), "Abc de fgh.", 5) == ("Abc.", 2)
    assert trim(Pieces(), "Abc de fgh ijk.", 4) == ("Abc de fgh.", 4)


def test_trim_strips_trailing_punctuation_before_the_full_stop() -> None:
    assert trim(Pieces(), "Abc, de; fg.", 3) == ("Abc, de.", 3)


def test_a_budget_below_the_first_sentence() -> None:
    """No whole sentence fits: the gap is the whole budget, filled by a later short one."""
    chosen = select(pool_of([LONG, SHORT]), Pieces(), 9, 16)
    assert chosen.n == 0 and chosen.sentences == [SHORT] and chosen.total == 2 and not chosen.trimmed


def test_the_gap_is_the_budget_less_the_whole_sentences() -> None:
    """One 2-token sentence fits 11, leaving 9 (over half the tolerance): the next sentence
    is trimmed to 9 tokens."""
    chosen = select(pool_of([SHORT, LONG]), Pieces(), 11, 16)
    assert chosen.n == 1 and chosen.trimmed and chosen.total == 11
    assert chosen.sentences == [SHORT, "Abc def ghi jkl mno pqr stu vwx."]


class DearFullStop(Pieces):
    """' Abc.' costs 5 tokens, more than the longer ' Abc de.' (2): counts need not grow
    with the head."""

    def count(self, text: str) -> int:
        return 5 if text == " Abc." else super().count(text)


def test_trim_keeps_the_head_with_the_most_tokens_not_the_last_that_fits() -> None:
    assert trim(DearFullStop(), "Abc de fgh.", 5) == ("Abc.", 5)
    assert trim(DearFullStop(), "Abc de fgh.", 4) == ("Abc de.", 2)


def test_no_budget_no_filler_and_nothing_counted() -> None:
    for budget in (0, -5):
        pool = pool_of([LONG])
        chosen = select(pool, Pieces(), budget, 16)
        assert (chosen.sentences, chosen.total, chosen.n, chosen.trimmed) == ([], 0, 0, False)
        assert pool.sentences == []
