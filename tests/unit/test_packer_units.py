"""The packer's pieces one at a time, with a word tokenizer whose counts are known by eye
(one token per word, two template tokens): the filler pool's prefix sums and fit at their
edges, the lead before depth 0, the refusal of a length that is too short, subsequence
search and located depths. Fast and direct; the property tests cover the whole."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from ctxprobe.haystack.counting import count_many
from ctxprobe.haystack.packer import (
    FillerPool,
    Insert,
    LengthTooShort,
    find_subsequence,
    lead_sentences,
    locate,
    pack,
)
from ctxprobe.tokenizers.base import TokenizerBase


class WordTokenizer(TokenizerBase):
    """One token per whitespace-separated word; the chat template adds a start and an end token."""

    name = "words"

    def __init__(self, batched: bool = True) -> None:
        self.calls: list[int] = []
        self.vocab: dict[str, int] = {}
        if batched:
            self.count_many = self._count_many

    def encode(self, text: str) -> list[int]:
        return [self.vocab.setdefault(w, len(self.vocab) + 10) for w in text.split()]

    def count(self, text: str) -> int:
        return len(text.split())

    def _count_many(self, texts: list[str]) -> list[int]:
        self.calls.append(len(texts))
        return [self.count(t) for t in texts]

    def encode_chat(self, messages: list[dict[str, str]]) -> list[int]:
        return [1] + self.encode("".join(m["content"] for m in messages)) + [2]

    def count_chat(self, messages: list[dict[str, str]]) -> int:
        return len(self.encode_chat(messages))


def render(haystack: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Q {haystack} A"}]


def cycle(*sentences: str):
    return itertools.cycle(sentences)


def test_count_many_uses_the_batched_counter_when_there_is_one() -> None:
    tok = WordTokenizer()
    assert count_many(tok, ["a b", "c", ""]) == [2, 1, 0] and tok.calls == [3]
    plain = WordTokenizer(batched=False)
    assert count_many(plain, ["a b", "c"]) == [2, 1] and plain.calls == []


def test_pool_prefix_sums_and_fit_at_their_edges() -> None:
    pool = FillerPool(cycle("one.", "two words.", "and three words."), WordTokenizer())
    assert [pool.count(i) for i in range(4)] == [1, 2, 3, 1]
    assert [pool.tokens(n) for n in range(5)] == [0, 1, 3, 6, 7]
    assert pool.fit(0) == 0 and pool.fit(-5) == 0
    idle = WordTokenizer()
    assert FillerPool(cycle("a."), idle).fit(0) == 0 and idle.calls == []  # nothing to fit: nothing counted
    assert [pool.fit(b) for b in (1, 2, 3, 5, 6, 7)] == [1, 1, 2, 2, 3, 4]
    # past the first batch of sentences: the pool extends itself
    assert pool.fit(600) == 300 and pool.tokens(300) == 600 and len(pool.sentences) >= 301
    assert pool.count(1000) == [1, 2, 3][1000 % 3]


def test_lead_sentences_are_the_fewest_that_hold_the_lead() -> None:
    pool = FillerPool(cycle("a b c."), WordTokenizer())  # 3 tokens each
    assert lead_sentences(pool, 0, 10) == 0 and lead_sentences(pool, -3, 10) == 0
    assert [lead_sentences(pool, t, 10) for t in (1, 3, 4, 6, 7)] == [1, 1, 2, 2, 3]
    assert lead_sentences(pool, 30, 4) == 4  # capped at the sentences there are


def test_pack_hits_an_additive_target_exactly_in_one_encode() -> None:
    tok = WordTokenizer()
    pool = FillerPool(cycle("f f f."), tok)
    needle = Insert("the code is 42.", 0.5, "target")
    packed = pack(tok, render, pool, [needle], 4 + 4 + 3 * 10)  # template+Q+A, needle, 10 sentences
    assert (packed.token_count, packed.n_filler, packed.encodes) == (38, 10, 1)
    assert packed.insert_counts == [4] and packed.haystack_tokens == 34 and packed.lead_tokens == 0
    assert packed.insert_offsets == [15]  # depth 0.5 of the 30 tokens around the needle: 15 before, 15 after
    assert packed.prompt_ids == tok.encode_chat(packed.messages)


def test_pack_keeps_the_lead_before_depth_zero() -> None:
    tok = WordTokenizer()
    pool = FillerPool(cycle("f f f."), tok)
    needle = Insert("the code is 42.", 0.0, "target")
    packed = pack(tok, render, pool, [needle], 38, lead_tokens=7)  # 7 tokens: 3 sentences of 3
    assert packed.lead_tokens == 9 and packed.insert_offsets == [9]
    assert packed.haystack.startswith("f f f. f f f. f f f. the code is 42.")
    pos, realised = locate(tok, packed, 0, needle.text)
    assert pos == 1 + 1 + 9 and realised == 0.0
    end = pack(tok, render, FillerPool(cycle("f f f."), tok), [Insert("the code is 42.", 1.0, "t")], 38,
               lead_tokens=7)
    assert locate(tok, end, 0, "the code is 42.")[1] == 1.0


def test_a_length_too_short_is_refused_with_what_it_needs() -> None:
    tok = WordTokenizer()
    needle = Insert("the code is 42.", 0.5, "target")
    with pytest.raises(LengthTooShort) as info:
        pack(tok, render, FillerPool(cycle("f."), tok), [needle], 7)
    assert info.value.needed == 8 and "length 7 is below the 8 tokens" in str(info.value)
    with pytest.raises(LengthTooShort) as info:
        pack(tok, render, FillerPool(cycle("f."), tok), [needle], 10, lead_tokens=3)
    assert info.value.needed == 11
    # exactly the tokens needed with no filler: a prompt without filler
    packed = pack(tok, render, FillerPool(cycle("f f."), tok), [needle], 8)
    assert (packed.token_count, packed.n_filler) == (8, 0)


def test_find_subsequence() -> None:
    ids = [5, 1, 2, 1, 2, 3, 1, 2, 3]
    assert find_subsequence(ids, [1, 2, 3]) == 3
    assert find_subsequence(ids, [1, 2, 3], 4) == 6
    assert find_subsequence(ids, [1, 2, 3], 7) is None
    assert find_subsequence(ids, [5]) == 0 and find_subsequence(ids, [9]) is None
    assert find_subsequence(ids, []) is None
    assert find_subsequence(ids, [2, 3, 1, 2, 3, 4]) is None  # runs off the end


def test_locate_without_filler_before_the_insert_and_with_no_rest() -> None:
    tok = WordTokenizer()
    packed = pack(tok, render, FillerPool(cycle("f f."), tok), [Insert("x y z.", 0.0, "t")], 7)
    assert packed.n_filler == 0 and packed.haystack == "x y z."
    assert locate(tok, packed, 0, "x y z.") == (2, 0.0)  # nothing but the insert: depth 0
    assert locate(tok, packed, 0, "not there") == (None, 0.0)


def test_insert_is_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Insert("a.", 0.5, "t").depth = 0.1  # type: ignore[misc]


class OneMoreWithTheNeedle(WordTokenizer):
    """The needle costs one token more in the prompt than counted alone."""

    def encode_chat(self, messages: list[dict[str, str]]) -> list[int]:
        ids = super().encode_chat(messages)
        return ids + [99] if "code" in messages[0]["content"] else ids


def test_a_prompt_over_the_target_without_any_filler_names_its_real_size() -> None:
    tok = OneMoreWithTheNeedle()
    with pytest.raises(LengthTooShort) as info:  # summed: 8 tokens, encoded: 9
        pack(tok, render, FillerPool(cycle("f f f."), tok), [Insert("the code is 42.", 0.5, "t")], 8)
    assert info.value.needed == 9


def test_boundaries_nearest_the_depth_ties_and_the_end() -> None:
    tok = WordTokenizer()

    def offset(depth: float) -> int:
        packed = pack(tok, render, FillerPool(cycle("f f f."), tok), [Insert("code 42.", depth, "t")], 36)
        assert packed.n_filler == 10 and packed.haystack_tokens == 32
        return packed.insert_offsets[0]

    # depths are shares of the 30 tokens other than the insert's own 2
    assert offset(4.5 / 30) == 3  # want 4.5: boundaries 3 and 6 tie, the earlier is taken
    assert offset(4.6 / 30) == 6
    assert offset(28 / 30) == 27  # want 28: 27 is nearer than 30
    assert offset(29.5 / 30) == 30
    assert offset(1.0) == 30  # the last boundary itself


@pytest.mark.parametrize("depth, offset", [(0.0, 0), (0.5, 15), (0.2, 6), (1.0, 30)])
def test_placed_depth_is_the_recorded_depth(depth: float, offset: int) -> None:
    """The insert is placed at ``depth`` of the haystack without itself, as RULER places a
    needle among the haystack's sentences and as ``locate`` records it: 10 sentences of 3
    tokens (30) and a 4-token needle. At 0.5 it has 15 tokens before it and 15 after; the
    placement over the haystack *with* the needle (0.5 × 34 = 17 → 18) recorded 0.6."""
    tok = WordTokenizer()
    packed = pack(tok, render, FillerPool(cycle("f f f."), tok), [Insert("the code is 42.", depth, "t")], 38)
    assert packed.n_filler == 10 and packed.haystack_tokens == 34
    assert packed.insert_offsets == [offset]
    pos, realised = locate(tok, packed, 0, "the code is 42.")
    assert realised == depth  # exactly: the boundary asked for exists
    assert pos == 2 + offset  # after the template's start token and "Q"


def test_fit_when_the_budget_ends_one_sentence_before_the_counted_batch() -> None:
    for budget in (254, 255, 256, 767, 768):  # 1 token each: batches end at 256, 512, 768
        assert FillerPool(cycle("a."), WordTokenizer()).fit(budget) == budget


def test_packed_defaults() -> None:
    from ctxprobe.haystack.packer import Packed

    p = Packed([], [], 0, "", [], 0, 0, 1)
    assert p.insert_counts == [] and p.lead_tokens == 0


class ByFillerCount(WordTokenizer):
    """Hidden tokens that depend on how many filler sentences the prompt holds."""

    def __init__(self, hidden: dict[int, int]) -> None:
        super().__init__()
        self.hidden = hidden

    def encode_chat(self, messages: list[dict[str, str]]) -> list[int]:
        ids = super().encode_chat(messages)
        k = self.hidden.get(messages[0]["content"].count("f f f."), 0)
        return ids[:k] if k < 0 else ids + [99] * k


def test_the_longest_prompt_under_the_target_is_kept_over_a_later_shorter_one() -> None:
    # 10 sentences: 34 (4 under); 11: 20 over, so 8 are dropped: 3 sentences = 17; then 10 again: stop
    tok = ByFillerCount({10: -4, 11: 20})
    packed = pack(tok, render, FillerPool(cycle("f f f."), tok), [Insert("the code is 42.", 0.5, "t")], 38)
    assert (packed.token_count, packed.n_filler, packed.encodes) == (34, 10, 3)


def test_assemble_without_a_lead_spans_the_whole_haystack() -> None:
    from ctxprobe.haystack.packer import assemble

    pool = FillerPool(cycle("f f f."), WordTokenizer())
    text, offsets, tokens = assemble(pool, 4, [Insert("x.", 0.5, "t")], [1])
    assert (text, offsets, tokens) == ("f f f. f f f. x. f f f. f f f.", [6], 13)


def test_find_subsequence_needs_equal_ids_not_larger_ones() -> None:
    assert find_subsequence([1, 3, 1, 2], [1, 2]) == 2
    assert find_subsequence([1, 3], [1, 2]) is None


def test_find_subsequence_restarts_right_after_a_false_start() -> None:
    assert find_subsequence([1, 1, 2], [1, 2]) == 1
    assert find_subsequence([7, 1, 1, 1, 2], [1, 2]) == 3


def test_located_depth_over_a_single_filler_token() -> None:
    tok = WordTokenizer()
    packed = pack(tok, render, FillerPool(cycle("f."), tok), [Insert("x y z.", 1.0, "t")], 8)
    assert packed.haystack == "f. x y z." and packed.haystack_tokens == 4
    assert locate(tok, packed, 0, "x y z.") == (3, 1.0)  # after the whole (one-token) rest


def test_depths_span_the_haystack_after_the_lead() -> None:
    tok = WordTokenizer()
    packed = pack(tok, render, FillerPool(cycle("f f f."), tok), [Insert("the code is 42.", 0.5, "t")], 38,
                  lead_tokens=7)
    # lead: 3 sentences (9 tokens); the rest without the needle holds 7 sentences = 21
    # tokens, so depth 0.5 wants 9 + 10.5 = 19.5: boundaries 18 and 21 tie, the earlier wins
    assert packed.lead_tokens == 9 and packed.insert_offsets == [18]
    assert locate(tok, packed, 0, "the code is 42.")[1] == 9 / 21


def test_a_gap_of_exactly_one_sentence_is_filled() -> None:
    tok = ByFillerCount({10: -3, 11: -3})  # 10 sentences: 35, 3 under; an 11th fits exactly
    packed = pack(tok, render, FillerPool(cycle("f f f."), tok), [Insert("the code is 42.", 0.5, "t")], 38)
    assert (packed.token_count, packed.n_filler) == (38, 11)
