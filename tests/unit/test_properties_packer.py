"""Property tests of the budget packer (hypothesis): for any filler sentence lengths, any
target and any depth, the prompt is never over the target, never further under it than
the packer's contract allows (max(0.5%, 16 tokens), with any sentence lengths: a user's
haystack mixes 2-token headings with 100-token sentences), and the needle sits where the
case says it does.

The tokenizer is a small deterministic one written here: words cut into pieces of at most
three characters (a leading space joins the piece), runs of newlines one token, a full
stop + space + capital one token, and a template adding three special tokens. The last two
rules make counting not additive -- across sentence boundaries (a sentence counted alone
is cut differently from the same sentence after another one) and at the template's edges
(``"\n\n"`` + ``"\n\n"`` is one token alone, two around a haystack) -- so the packer's
verify-and-correct step is exercised both ways (too long and too short), not just its
first guess.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.haystack.packer import FillerPool, Insert, LengthTooShort, find_subsequence, locate, pack
from ctxprobe.tokenizers.base import TokenizerBase

# ". X" merges across a sentence boundary, except before "T": the needles start with "The"
# and, as with real pre-tokenizers that split at spaces, must encode the same anywhere.
_PIECE = re.compile(r"\n+|\. [A-SU-Z]| ?[^\s]{1,3}| ")


class ToyTokenizer(TokenizerBase):
    name = "toy"
    chat_template_hash = None
    trained_context = None

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}

    def encode(self, text: str) -> list[int]:
        return [self.vocab.setdefault(p, len(self.vocab) + 10) for p in _PIECE.findall(text)]

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def render_chat(self, messages: list[dict[str, str]]) -> str:
        return "".join(m["content"] for m in messages)

    def encode_chat(self, messages: list[dict[str, str]]) -> list[int]:
        return [1] + self.encode(self.render_chat(messages)) + [2, 3]

    def count_chat(self, messages: list[dict[str, str]]) -> int:
        return len(self.encode_chat(messages))


def render(haystack: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Read this.\n\n{haystack}\n\nWhat is the code for fox?"}]


NEEDLE = "The code for fox is 4819203."

words = st.text(alphabet="abcdefghijklmnop", min_size=1, max_size=14)
sentence = st.lists(words, min_size=1, max_size=25).map(lambda ws: " ".join(ws).capitalize() + ".")
sentences = st.lists(sentence, min_size=1, max_size=40)
depth = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def build(filler: list[str], target: int, d: float, extra: list[Insert] = ()):
    tok = ToyTokenizer()
    pool = FillerPool(itertools.cycle(filler), tok)
    inserts = [Insert(NEEDLE, d, "target"), *extra]
    return tok, pool, pack(tok, render, pool, inserts, target)


@settings(max_examples=60, deadline=None)
@given(filler=sentences, target=st.integers(min_value=60, max_value=3_000), d=depth)
def test_never_over_target_and_within_the_contract(filler: list[str], target: int, d: float) -> None:
    try:
        tok, pool, packed = build(filler, target, d)
    except LengthTooShort:
        # refused only when even the prompt with no filler at all is over the target
        assert ToyTokenizer().count_chat(render(NEEDLE)) > target
        return
    ids = tok.encode_chat(packed.messages)
    assert packed.token_count == len(ids) == len(packed.prompt_ids)  # the count is a real encode
    assert packed.token_count <= target
    # contract: no further under than max(0.5% of target, 16 tokens), whatever the sentences
    assert target - packed.token_count <= fill_tolerance(target)


@settings(max_examples=60, deadline=None)
@given(filler=sentences, target=st.integers(min_value=150, max_value=3_000), d=depth)
def test_needle_is_where_the_case_says(filler: list[str], target: int, d: float) -> None:
    try:
        tok, pool, packed = build(filler, target, d)
    except LengthTooShort:
        return
    pos, realised = locate(tok, packed, 0, NEEDLE)
    assert pos is not None
    needle_ids = tok.encode(" " + NEEDLE)
    if packed.prompt_ids[pos: pos + len(needle_ids)] != needle_ids:
        needle_ids = tok.encode(NEEDLE)  # first in the haystack: no space before it
    assert packed.prompt_ids[pos: pos + len(needle_ids)] == needle_ids
    assert find_subsequence(packed.prompt_ids, needle_ids, pos + 1) is None  # stated once
    # the realised depth, recomputed from the text: filler tokens before / all filler tokens
    before, _, after = packed.haystack.partition(NEEDLE)
    n_before = sum(tok.count(" " + s) for s in _sentences(before))
    n_after = sum(tok.count(" " + s) for s in _sentences(after))
    assert n_before + n_after > 0
    assert realised == n_before / (n_before + n_after)
    # and it is the sentence boundary nearest the asked depth: off by at most half the
    # longest filler sentence (depth is placed and measured over the haystack without the
    # needle, as RULER places it)
    longest = max(tok.count(" " + s) for s in filler)
    assert abs(realised - d) <= (longest / 2) / (n_before + n_after) + 1e-9


@settings(max_examples=40, deadline=None)
@given(filler=sentences, target=st.integers(min_value=300, max_value=3_000), d=depth,
       others=st.lists(depth, min_size=1, max_size=6))
def test_inserts_keep_their_depth_order(filler: list[str], target: int, d: float, others: list[float]) -> None:
    extra = [Insert(f"The code for owl{i} is 55501{i:02d}.", x, "distractor") for i, x in enumerate(others)]
    try:
        tok, pool, packed = build(filler, target, d, extra)
    except LengthTooShort:
        return
    assert packed.token_count <= target
    texts = [NEEDLE, *(e.text for e in extra)]
    depths = [d, *others]
    where = [packed.haystack.index(t) for t in texts]
    assert all(packed.haystack.count(t) == 1 for t in texts)
    # an insert asked deeper never lands before one asked shallower
    for i in range(len(texts)):
        for j in range(len(texts)):
            if depths[i] < depths[j]:
                assert where[i] < where[j]
    # recorded offsets agree with the text: tokens of everything before each insert
    for i in range(len(texts)):
        head = packed.haystack[: where[i]].strip()
        assert packed.insert_offsets[i] == sum(tok.count(" " + s) for s in _sentences(head))


def _sentences(text: str) -> list[str]:
    """Filler sentences of a haystack fragment (each ends with '.', none contains one)."""
    return [s.strip() + "." for s in text.split(".") if s.strip()]



def test_a_prompt_exactly_at_target_is_used() -> None:
    # every filler sentence is " Abc def ghi." = 4 tokens, so the target is reachable exactly
    filler = ["Abc def ghi."]
    tok = ToyTokenizer()
    no_filler = tok.count_chat(render(NEEDLE))
    for k in (1, 7, 50):
        target = no_filler + 4 * k
        _, _, packed = build(filler, target, 0.5)
        assert packed.token_count == target and packed.n_filler == k


@settings(max_examples=30, deadline=None)
@given(d=st.floats(min_value=0.3, max_value=1.0), k=st.integers(min_value=1, max_value=8),
       target=st.integers(min_value=800, max_value=3_000))
@example(d=1.0, k=3, target=1_000)
def test_target_depth_counts_the_inserts_before_it(d: float, k: int, target: int) -> None:
    """A target at depth d starts at d of the rest of the haystack's tokens (everything but
    itself, distractors included), however many distractors precede it (4-token filler
    sentences: boundaries are dense); at d = 1 it ends the haystack."""
    extra = [Insert(f"The code for owl{i} is 55501{i:02d}.", 0.05, "distractor") for i in range(k)]
    tok, pool, packed = build(["Abc def ghi."], target, d, extra)
    want = d * (packed.haystack_tokens - packed.insert_counts[0])
    assert abs(packed.insert_offsets[0] - want) <= 2  # half a 4-token sentence


# a user's haystack: headings of one word next to run-on sentences of up to 60 words
odd_sentence = st.one_of(
    st.lists(words, min_size=1, max_size=2).map(lambda ws: " ".join(ws).capitalize()),
    st.lists(words, min_size=20, max_size=60).map(lambda ws: " ".join(ws).capitalize() + "."),
    sentence)


@settings(max_examples=60, deadline=None)
@given(filler=st.lists(odd_sentence, min_size=1, max_size=30), target=st.integers(min_value=200, max_value=6_000),
       d=depth)
def test_a_user_haystack_of_odd_sentence_lengths_lands_within_tolerance(filler: list[str], target: int, d: float
                                                                        ) -> None:
    try:
        tok, pool, packed = build(filler, target, d)
    except LengthTooShort:
        assert ToyTokenizer().count_chat(render(NEEDLE)) > target - fill_tolerance(target)
        return
    assert packed.token_count == len(tok.encode_chat(packed.messages)) <= target
    assert target - packed.token_count <= fill_tolerance(target)
    assert packed.haystack.count(NEEDLE) == 1
