"""The packer's verify-and-correct loop step by step, with a word tokenizer (one token per
word, two template tokens) that can hide or add tokens depending on how many filler
sentences a prompt holds: which budget each round tries, when it stops, how many encodes
it spends and which prompt it keeps; plus the pool's batching and the compact encode."""

from __future__ import annotations

import array
import itertools
import threading

import pytest

from ctxprobe.haystack import packer
from ctxprobe.haystack.packer import FillerPool, Insert, LengthTooShort, compact_ids, pack
from ctxprobe.tokenizers.base import TokenizerBase

NEEDLE = Insert("the code is 42.", 0.5, "target")  # 4 tokens


class Words(TokenizerBase):
    """One token per word; the template adds a start and an end token. ``hidden`` maps how
    many filler words "f" a prompt with the needle holds to tokens added (or, negative,
    removed) by its encode; every encode's filler count is recorded in ``seen``."""

    name = "words"

    def __init__(self, hidden: dict[int, int] | None = None) -> None:
        self.hidden = hidden or {}
        self.seen: list[int] = []
        self.compact = 0

    def encode(self, text: str) -> list[int]:
        return [len(w) + 10 for w in text.split()]

    def count(self, text: str) -> int:
        return len(text.split())

    def _ids(self, messages: list[dict[str, str]]) -> tuple[int, list[int]]:
        text = "".join(m["content"] for m in messages)
        ids = [1] + self.encode(text) + [2]
        fs = text.split().count("f.") + text.split().count("f")
        k = self.hidden.get(fs, 0) if "code" in text else 0
        return fs, ids[:k] if k < 0 else ids + [99] * k

    def count_chat(self, messages: list[dict[str, str]]) -> int:
        return len(self._ids(messages)[1])

    def encode_chat(self, messages: list[dict[str, str]]) -> list[int]:
        fs, ids = self._ids(messages)
        self.seen.append(fs)
        return ids

    def encode_chat_compact(self, messages: list[dict[str, str]]) -> array.array:
        self.compact += 1
        return array.array("i", self.encode_chat(messages))


def render(haystack: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Q {haystack} A"}]


def fpool(tok: Words, sentence: str = "f.") -> FillerPool:
    return FillerPool(itertools.cycle([sentence]), tok)


def test_an_undercount_within_the_target_is_kept_in_one_encode() -> None:
    """Ten 3-token sentences predict 38 of a 40 target; the prompt encodes to 39: the
    counts erred short, what is left is below one sentence more: stop."""
    tok = Words({30: 1})
    packed = pack(tok, render, FillerPool(itertools.cycle(["f f f."]), tok), [NEEDLE], 40)
    assert (packed.token_count, packed.n_filler, packed.encodes) == (39, 10, 1)  # 30 f's, budget 32


def test_one_token_over_drops_one_token_of_filler() -> None:
    tok = Words({30: 1})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert (packed.token_count, packed.n_filler, packed.encodes) == (37, 29, 2)
    assert tok.seen == [30, 29]


def test_over_by_several_drops_that_many() -> None:
    tok = Words({30: 5})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert (packed.token_count, packed.n_filler, packed.encodes) == (33, 25, 2)


def test_an_overcount_aims_higher_by_what_it_missed() -> None:
    tok = Words({30: -3, 33: -3})  # 3 tokens fewer than counted, at 30 sentences and at 33
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30, 33] and (packed.token_count, packed.n_filler, packed.encodes) == (38, 33, 2)


def test_aiming_higher_at_a_budget_already_tried_stops() -> None:
    """Budget 30 is 3 over; 27 (9 sentences of 3) is 3 under, which points back at 30, already
    tried: stop with the 9-sentence prompt after two encodes, nothing in between tried."""
    tok = Words({30: 3, 27: -3})
    packed = pack(tok, render, FillerPool(itertools.cycle(["f f f."]), tok), [NEEDLE], 38)
    assert tok.seen == [30, 27]
    assert (packed.token_count, packed.n_filler, packed.encodes) == (32, 9, 2)


def test_going_lower_past_budgets_already_tried() -> None:
    """30 is 3 over -> 27 is 2 under (33) -> 29 is 2 over -> 27 again, already tried: go
    lower still, to 26, which holds (34): the longest prompt within the target is kept."""
    tok = Words({30: 3, 27: -2, 29: 3})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30, 27, 29, 26]
    assert (packed.token_count, packed.n_filler, packed.encodes) == (34, 26, 4)


def test_the_rounds_are_capped_at_12() -> None:
    """Every budget from 30 down is one token over, the 13th (18 sentences) would fit: the
    loop gives up after 12 encodes with nothing within the target."""
    tok = Words({s: 31 - s for s in range(19, 31)})
    with pytest.raises(LengthTooShort) as info:
        pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == list(range(30, 18, -1)) and info.value.needed == 8


def test_a_budget_of_zero_is_tried() -> None:
    """One sentence is one over: the prompt with no filler at all is tried, and fits."""
    tok = Words({1: 1})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 9)
    assert tok.seen == [1, 0] and (packed.token_count, packed.n_filler, packed.encodes) == (8, 0, 2)


def test_over_even_with_no_filler_names_the_size_without_filler() -> None:
    tok = Words({1: 2})  # one sentence: 11 tokens, so the prompt without it is 10
    with pytest.raises(LengthTooShort) as info:
        pack(tok, render, fpool(tok), [NEEDLE], 9)
    assert tok.seen == [1] and info.value.needed == 10


def test_every_round_under_the_target_is_kept_only_if_longer() -> None:
    # 30: 6 under (32); 36 is tried next: 2 over; 34: 34 - 1 = 33 ... the longest kept
    tok = Words({30: -6, 36: 2, 34: -3})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    lengths = {s: 8 + s + tok.hidden.get(s, 0) for s in tok.seen}
    assert packed.token_count == max(v for v in lengths.values() if v <= 38)
    assert packed.n_filler == max((s for s in tok.seen if lengths[s] == packed.token_count))


def test_the_fixed_part_is_measured_with_the_pool_s_first_sentence() -> None:
    """First sentence 3 tokens, second 1: the prompt around the filler is the encode with the
    first sentence in place minus that sentence's count; the first guess is then exact."""
    tok = Words()
    pool = FillerPool(itertools.cycle(["f f f.", "f."]), tok)
    packed = pack(tok, render, pool, [NEEDLE], 8 + 3 + 1 + 3 + 1)
    assert (packed.token_count, packed.n_filler, packed.encodes) == (16, 4, 1)


def test_a_length_with_no_room_for_the_lead_is_refused() -> None:
    tok = Words()
    with pytest.raises(LengthTooShort) as info:
        pack(tok, render, fpool(tok), [NEEDLE], 9, lead_tokens=2)
    assert info.value.needed == 10
    packed = pack(tok, render, fpool(tok), [NEEDLE], 10, lead_tokens=2)
    assert packed.token_count == 10 and packed.lead_tokens == 2
    with pytest.raises(LengthTooShort) as info:  # room for the needle alone, not for a 1-token lead
        pack(tok, render, fpool(tok), [NEEDLE], 8, lead_tokens=1)
    assert info.value.needed == 9


class Overhead(Words):
    """The template costs ``extra`` tokens more around a filler sentence alone than around
    the needle (or nothing)."""

    def __init__(self, extra: int = 1) -> None:
        super().__init__()
        self.extra = extra

    def count_chat(self, messages: list[dict[str, str]]) -> int:
        text = messages[0]["content"]
        return super().count_chat(messages) + (self.extra if "code" not in text and text != "Q  A" else 0)


def test_the_fixed_part_is_measured_with_a_sentence_unless_the_length_is_too_short() -> None:
    """Measured with a sentence in place the needle needs 9 tokens, around an empty haystack 8.
    A target of 8 is not refused: the smaller measure lets the loop try (and the prompt with
    no filler fits). With room for the lead the first measure is used as it is: one token
    short at first, corrected by a second encode."""
    tok = Overhead()
    packed = pack(tok, render, fpool(tok), [NEEDLE], 8)
    assert (packed.token_count, packed.n_filler) == (8, 0)
    with pytest.raises(LengthTooShort) as info:
        pack(tok, render, fpool(tok), [NEEDLE], 7)
    assert info.value.needed == 8
    tok = Overhead()
    packed = pack(tok, render, fpool(tok), [NEEDLE], 20, lead_tokens=3)
    assert tok.seen == [11, 12] and (packed.token_count, packed.n_filler, packed.lead_tokens) == (20, 12, 3)


def test_a_target_between_the_two_measures_of_the_fixed_part_is_packed() -> None:
    """10 tokens measured with a sentence, 8 around an empty haystack: a target of 9 is tried
    from the smaller measure and holds one filler sentence."""
    tok = Overhead(extra=2)
    packed = pack(tok, render, fpool(tok), [NEEDLE], 9)
    assert tok.seen == [1] and (packed.token_count, packed.n_filler, packed.encodes) == (9, 1, 1)


def test_a_first_encode_over_twice_the_target_is_refused_with_its_size_without_filler() -> None:
    tok = Words({30: 40})  # 30 sentences: 78 tokens, 48 of them not filler
    with pytest.raises(LengthTooShort) as info:
        pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30] and info.value.needed == 48


def test_the_pool_counts_in_batches_of_256() -> None:
    tok = Words()
    pool = FillerPool(iter(["f."] * 256), tok)  # a source of exactly one batch
    assert pool.count(0) == 1 and len(pool.sentences) == 256
    assert pool.count(255) == 1 and pool.tokens(256) == 256 and len(pool.sentences) == 256
    with pytest.raises((StopIteration, RuntimeError)):
        pool.count(256)


def test_compact_encoding_inside_the_guard() -> None:
    class Guard:
        def __init__(self) -> None:
            self.entered = 0
            self.lock = threading.Lock()

        def __enter__(self) -> None:
            self.entered += 1
            self.lock.acquire()

        def __exit__(self, *exc: object) -> None:
            self.lock.release()

    tok = Words()
    plain = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert isinstance(plain.prompt_ids, list) and tok.compact == 0
    guard = Guard()
    compact_ids(True, guard)
    try:
        packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    finally:
        compact_ids(False)
    assert isinstance(packed.prompt_ids, array.array) and list(packed.prompt_ids) == plain.prompt_ids
    assert tok.compact == packed.encodes == guard.entered == 1
    assert packer._COMPACT is False and packer._ENCODE_GUARD is None
    compact_ids()  # on by default, without a guard
    try:
        assert isinstance(pack(tok, render, fpool(tok), [NEEDLE], 38).prompt_ids, array.array)
    finally:
        compact_ids(False)


def test_of_two_rounds_with_equal_counts_the_first_is_kept() -> None:
    """30 is 2 over -> 28 holds 33 (3 under its count) -> 31 also holds 33: aiming higher
    gained nothing within the tolerance (16): stop. The first 33-token prompt is kept."""
    tok = Words({30: 2, 28: -3, 31: -6, 37: 10})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30, 28, 31]
    assert (packed.token_count, packed.n_filler, packed.encodes) == (33, 28, 3)


def test_find_subsequence_in_compact_ids() -> None:
    from ctxprobe.haystack.packer import find_subsequence

    ids = array.array("i", [5, 1, 3, 1, 2, 3])
    assert find_subsequence(ids, [1, 2]) == 3 and find_subsequence(ids, array.array("i", [1, 2])) == 3
    assert find_subsequence(ids, [2, 1]) is None


def test_a_count_more_than_twice_the_encode_aims_higher_by_the_whole_gap() -> None:
    """52 sentences count 60 but encode to 20: the next budget is 52 + 40 (far over), then
    51, just below the budget first tried, holds."""
    tok = Words({52: -40})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 60)
    assert tok.seen == [52, 92, 51] and (packed.token_count, packed.n_filler, packed.encodes) == (59, 51, 3)


def test_assemble_without_a_lead_puts_depth_zero_first() -> None:
    from ctxprobe.haystack.packer import assemble

    pool = FillerPool(itertools.cycle(["f f f."]), Words())
    assert assemble(pool, 2, [Insert("x.", 0.0, "t")], [1]) == ("x. f f f. f f f.", [0], 7)


def test_landing_exactly_on_a_large_target_stops() -> None:
    """392 sentences count 3 more than they encode, so 395 are tried: 403 counted, exactly
    the 400 of the target encoded: stop (targets past 256 are not cached ints)."""
    tok = Words({392: -3, 395: -3})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 400)
    assert tok.seen == [392, 395] and (packed.token_count, packed.n_filler, packed.encodes) == (400, 395, 2)


def test_a_target_equal_to_the_measured_fixed_part_starts_with_no_filler() -> None:
    """Measured with a sentence the needle needs 9 tokens: a target of 9 is not too short, so
    the first round has no filler (8 tokens, one under its count), the second one sentence."""
    tok = Overhead()
    packed = pack(tok, render, fpool(tok), [NEEDLE], 9)
    assert tok.seen == [0, 1] and (packed.token_count, packed.n_filler) == (9, 1)


class TurnWords(Words):
    """Words, plus 6 tokens of wrapping per message: a conversation's turns cost tokens
    the filler's counts do not predict."""

    def _ids(self, messages: list[dict[str, str]]) -> tuple[int, list[int]]:
        fs, ids = super()._ids(messages)
        return fs, ids + [98] * (6 * len(messages))


def turns(haystack: str) -> list[dict[str, str]]:
    """A conversation layout's render: one prior turn per 20 filler words (at least one)."""
    words = haystack.split()
    chunks = [" ".join(words[i:i + 20]) for i in range(0, len(words), 20)] or [""]
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": c} for i, c in enumerate(chunks)] + [
        {"role": "user", "content": "Q A"}]


def test_a_conversation_short_of_its_target_aims_higher_by_the_shortfall() -> None:
    """Each turn costs 6 tokens the counts miss, so the first pack of a 400-token target lands
    short by more than the tolerance (16): the loop aims higher by what it missed, and the
    prompt ends within the tolerance below the target, never over it (exact by its encode)."""
    from ctxprobe.haystack.fill import fill_tolerance

    tok = TurnWords()
    packed = pack(tok, turns, FillerPool(itertools.cycle(["f f f."]), tok), [NEEDLE], 400)
    assert 400 - fill_tolerance(400) <= packed.token_count <= 400
    assert packed.token_count == tok.count_chat(packed.messages) and len(packed.messages) > 2
    assert packed.encodes > 1  # the first render fell short: a second was aimed higher
    assert (packed.token_count, packed.encodes, packed.n_filler) == (400, 4, 102)  # as computed by hand-checked runs


def test_shuffled_filler_keeps_the_lead_and_each_sentences_count() -> None:
    """Shuffling (haystack_order: shuffled) permutes the sentences after the first ``lead``
    only, each with its own count: the same sentences and budget, another order."""
    from ctxprobe.haystack.packer import Filler, shuffled

    sentences = [f"s{i} " + "w " * i + "." for i in range(12)]
    filler = Filler(sentences, [i + 2 for i in range(12)], 12, False)
    out = shuffled(filler, 3, seed=7)
    assert out.sentences[:3] == sentences[:3] and sorted(out.sentences) == sorted(sentences)
    assert out.sentences != sentences  # seed 7 moves something
    assert all(out.counts[i] == filler.counts[sentences.index(s)] for i, s in enumerate(out.sentences))
    assert (out.n, out.trimmed) == (filler.n, filler.trimmed)


class WrapWords(Words):
    """:class:`Words` that wraps each message in two tokens, as a chat template does: a
    conversation's count grows by two with every turn its haystack is cut into."""

    name = "turn-words"

    def _ids(self, messages: list[dict[str, str]]) -> tuple[int, list[int]]:
        fs, ids = 0, [1]
        for m in messages:
            text = m["content"] or ""
            ids += [3, 4] + self.encode(text)
            fs += text.split().count("f.") + text.split().count("f")
        ids.append(2)
        k = self.hidden.get(fs, 0) if any("code" in (m["content"] or "") for m in messages) else 0
        return fs, ids[:k] if k < 0 else ids + [99] * k


def _turns_pack(hidden: dict[int, int]) -> tuple[WrapWords, list[int], packer.Packed]:
    from ctxprobe.haystack.layout import conversation
    from ctxprobe.spec import PromptLayout

    layout = PromptLayout(messages="turns", turn_tokens=16)
    sizes: list[int] = []

    def render_turns(haystack: str) -> list[dict[str, str]]:
        messages = conversation("Q", haystack, "A", layout, evidence=[NEEDLE.text])
        sizes.append(len(messages))
        return messages  # type: ignore[return-value]

    tok = WrapWords(hidden)
    return tok, sizes, pack(tok, render_turns, fpool(tok), [NEEDLE], 400)


def test_a_conversation_keeps_its_first_turn_count_while_the_filler_is_corrected() -> None:
    """386 one-token sentences (a one-turn measure) cut into 19 messages cost 32 wrapping
    tokens more: one correction down to 354 lands on 400 exactly, still 19 messages."""
    tok, sizes, packed = _turns_pack({})
    assert tok.seen == [386, 354] and sizes == [3, 19, 19]
    assert (packed.token_count, packed.n_filler, packed.encodes, len(packed.messages)) == (400, 354, 2, 19)


def test_a_conversation_more_than_the_tolerance_short_aims_at_the_target() -> None:
    """At 354 sentences the prompt encodes 17 short (383: one past the tolerance of 16): a
    conversation aims higher by what the target misses (371, 20 over), then, 354 being
    tried, one lower (353: 399). Every render after the one-turn measure has 19 messages."""
    tok, sizes, packed = _turns_pack({354: -17})
    assert tok.seen == [386, 354, 371, 353] and sizes == [3, 19, 19, 19, 19]
    assert (packed.token_count, packed.n_filler, packed.encodes, len(packed.messages)) == (399, 353, 4, 19)


def test_a_conversation_exactly_the_tolerance_short_is_kept() -> None:
    tok, sizes, packed = _turns_pack({354: -16})
    assert tok.seen == [386, 354] and (packed.token_count, packed.encodes) == (384, 2)


def test_the_turn_count_is_pinned_only_inside_a_pack() -> None:
    from ctxprobe.haystack.layout import split_turns

    text = " ".join(["A sentence here."] * 64)
    _turns_pack({})
    assert len(split_turns(text, 16)) == round(len(text) / 64)  # no pin left behind by the pack


def test_a_conversation_within_the_tolerance_is_kept_without_aiming_higher() -> None:
    """10 short of the target (inside the tolerance of 16): kept after two encodes, no third."""
    tok, _sizes, packed = _turns_pack({354: -10})
    assert tok.seen == [386, 354] and (packed.token_count, packed.encodes) == (390, 2)


def test_a_shuffle_seed_reorders_the_filler_after_the_lead_and_none_keeps_it() -> None:
    words = [f"w{i}." for i in range(40)]

    def packed(seed: int | None, lead: int = 0) -> list[str]:
        tok = Words()
        p = pack(tok, render, FillerPool(itertools.cycle(words), tok), [NEEDLE], 38, lead_tokens=lead,
                 shuffle_seed=seed)
        return [w for w in p.haystack.split() if w.startswith("w")]

    kept = packed(None)
    assert kept == words[: len(kept)]  # the source's order
    mixed = packed(7)
    assert sorted(mixed) == sorted(kept) and mixed != kept  # the same sentences, another order
    assert packed(7) == mixed  # seeded: the same order again
    led = packed(7, lead=3)
    assert led[:3] == words[:3] and sorted(led) == sorted(kept)  # the lead is never moved


def test_a_conversation_far_short_aims_higher_by_the_whole_shortfall() -> None:
    """At 354 sentences the prompt encodes 200 tokens (half the target): aim 200 higher
    (554), which is over, and 354 having been tried, one lower (353: 399)."""
    tok, _sizes, packed = _turns_pack({354: -200})
    assert tok.seen == [386, 354, 554, 353] and (packed.token_count, packed.encodes) == (399, 4)


def test_aiming_higher_is_capped_at_what_the_prompt_is_short_of_the_target() -> None:
    """30 counts 38 but encodes to 32 (6 short): aim 6 higher. 36 counts 44 but encodes to 33:
    its counts missed 11, the prompt is only 5 short, so 41 is tried, not 47 (every sentence
    overcounted, the next correction would overshoot by the same again). 41 is over: 29 holds."""
    tok = Words({30: -6, 36: -11})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30, 36, 41, 29]
    assert (packed.token_count, packed.n_filler, packed.encodes) == (37, 29, 4)


def test_a_step_up_that_gains_nothing_stops_exactly_at_the_tolerance() -> None:
    """30 encodes 16 short of 38 (the tolerance of 38 is 16); aiming 16 higher the prompt
    is no longer: stop, the first kept."""
    tok = Words({30: -16, 46: -32})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30, 46] and (packed.token_count, packed.n_filler, packed.encodes) == (22, 30, 2)


def test_a_step_up_that_gains_nothing_goes_on_one_token_past_the_tolerance() -> None:
    """As above, one token shorter (17 short): past the tolerance, so the loop aims higher again."""
    tok = Words({30: -17, 47: -34})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen[:3] == [30, 47, 64] and packed.token_count > 21


def test_a_step_up_that_gains_one_token_goes_on() -> None:
    """30 encodes 6 short; 36 encodes 5 short (one token gained): aim higher again, to 41
    (over by 3), 38 (over), then 29 holds what it counts (37)."""
    tok = Words({30: -6, 36: -11, 41: -8})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30, 36, 41, 38, 29] and (packed.token_count, packed.n_filler) == (37, 29)


def test_a_step_up_that_loses_tokens_within_the_tolerance_stops() -> None:
    """30 encodes 6 short; 36 encodes 8 short (fewer than before): stop, the first kept."""
    tok = Words({30: -6, 36: -14})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30, 36] and (packed.token_count, packed.n_filler) == (32, 30)


def test_a_step_up_that_gains_nothing_half_the_target_short_goes_on() -> None:
    """19 of 38 twice (the gap, 19, past the tolerance of 16): aim higher again."""
    tok = Words({30: -19, 49: -38})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen[:3] == [30, 49, 68] and packed.token_count > 19


def test_an_overshoot_between_two_short_rounds_is_no_step_up() -> None:
    """30 is 6 short (32), 36 is over, 29 is 7 short (31, below 32): the round before it went
    down, not up, so no gain is judged and the loop aims higher (35, over; then 28 holds 36)."""
    tok = Words({30: -6, 36: 1, 29: -6})
    packed = pack(tok, render, fpool(tok), [NEEDLE], 38)
    assert tok.seen == [30, 36, 29, 35, 28] and (packed.token_count, packed.n_filler) == (36, 28)
