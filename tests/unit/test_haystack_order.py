"""``haystack_order: shuffled``: the same filler sentences, permuted with a seed, the same
budget, the needle at the depth recorded; ``coherent`` (the default) leaves prompts as they were."""

from __future__ import annotations

from collections import Counter

import pytest

from ctxprobe.core.case import Cell
from ctxprobe.haystack import filler_source
from ctxprobe.haystack.fill import fill_tolerance, select
from ctxprobe.haystack.packer import FillerPool, Insert, find_subsequence, pack, shuffled
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer


@pytest.fixture(scope="module")
def tok():
    return resolve_tokenizer("local")


def test_shuffled_filler_is_a_permutation_after_the_lead(tok) -> None:
    pool = FillerPool(filler_source(None, 5), tok)
    filler = select(pool, tok, 1500, fill_tolerance(1500))
    out = shuffled(filler, 3, seed=11)
    assert Counter(out.sentences) == Counter(filler.sentences) and out.total == filler.total
    assert out.sentences[:3] == filler.sentences[:3] and out.sentences != filler.sentences
    assert shuffled(filler, 3, seed=11).sentences == out.sentences  # seeded
    assert shuffled(filler, 3, seed=12).sentences != out.sentences


def test_pack_shuffled_same_sentences_same_budget(tok) -> None:
    render = lambda h: [{"role": "user", "content": "Text:\n" + h + "\nQuestion?"}]  # noqa: E731
    needle = "The special magic number for tidy-lamp-402 is 5550123."
    a = pack(tok, render, FillerPool(filler_source(None, 9), tok), [Insert(needle, 0.3, "target")], 3000)
    b = pack(tok, render, FillerPool(filler_source(None, 9), tok), [Insert(needle, 0.3, "target")], 3000,
             shuffle_seed=4)
    assert a.haystack != b.haystack
    assert Counter(a.haystack.split(" ")) == Counter(b.haystack.split(" "))  # the same words: the same sentences
    assert 3000 - fill_tolerance(3000) < b.token_count <= 3000 and a.n_filler == b.n_filler


@pytest.mark.parametrize("family,params", [("niah", {}), ("vartrack", {}), ("multihop", {})])
def test_family_shuffled_case(tok, family: str, params: dict) -> None:
    ctx = BuildContext(tokenizer=tok, haystack=None)
    fam = make_family(family, ctx)
    coherent = validate_params(family, params)
    mixed = validate_params(family, {**params, "haystack_order": "shuffled"})
    for depth in (0.0, 0.5, 1.0):
        cell = Cell(family, 2048, depth)
        a = fam.generate(cell, 0, seed=3, params=coherent)
        b = fam.generate(cell, 0, seed=3, params=mixed)
        text_a, text_b = a.messages[-1]["content"], b.messages[-1]["content"]
        assert text_a != text_b and Counter(text_a.split()) == Counter(text_b.split())
        assert "haystack_order" not in a.meta and b.meta["haystack_order"] == "shuffled"
        assert 2048 - fill_tolerance(2048) < b.token_count <= 2048
        # the needle is where the case says: at its token position, at the depth asked
        needle = b.meta.get("needle") or b.meta["statements"][0]
        found = find_subsequence(b.prompt_ids, tok.encode(" " + needle))  # mid-text it follows a space
        if found is None:
            found = find_subsequence(b.prompt_ids, tok.encode(needle))  # at the haystack's start it does not
        assert b.needle_token_pos is not None and found == b.needle_token_pos
        assert abs(b.realised_depth - depth) < 0.06
        assert b.expected == a.expected


def test_shuffled_is_shared_across_depths(tok) -> None:
    """Every depth of a group gets the same permutation (paired depths, prefix reuse)."""
    ctx = BuildContext(tokenizer=tok, haystack=None)
    fam = make_family("niah", ctx)
    params = validate_params("niah", {"haystack_order": "shuffled"})
    a = fam.generate(Cell("niah", 2048, 0.0), 0, seed=3, params=params)
    b = fam.generate(Cell("niah", 2048, 1.0), 0, seed=3, params=params)
    strip = lambda c: c.messages[-1]["content"].replace(c.meta["needle"] + " ", "").replace(" " + c.meta["needle"], "")  # noqa: E731
    assert strip(a) == strip(b)
