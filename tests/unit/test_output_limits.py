"""Each family's default output limit fits its longest correct answer plus a lead-in."""

from __future__ import annotations

import pytest

from ctxprobe.spec import OUTPUT_FLOOR, OUTPUT_LEAD_IN, answer_items, default_output_limit, make_spec
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

#: the words a model puts around an answer, measured as our own lead-in sentence
LEAD_IN = "The special magic numbers for kind-canyon-407 mentioned in the provided text are:"

CASES = [("niah", {}), ("niah", {"variant": "multikey"}), ("niah", {"variant": "multivalue"}),
         ("niah", {"variant": "multiquery"}), ("niah", {"variant": "multiquery", "queries": 9}),
         ("vartrack", {}), ("vartrack", {"hops": 8}), ("aggregation", {}),
         ("aggregation", {"variant": "frequent-words"}), ("multihop", {})]


@pytest.fixture(scope="module")
def tok():
    return resolve_tokenizer("local")


@pytest.mark.parametrize(("family", "params"), CASES)
def test_default_limit_fits_the_longest_correct_answer(tok, family: str, params: dict) -> None:
    fam = make_family(family, BuildContext(tokenizer=tok, haystack=None))
    worst = 0
    for rep in range(3):
        case = fam.generate(Cell(family, 2048, 0.5), rep, seed=rep, params=validate_params(family, params))
        assert len(case.expected) == answer_items(family, params)  # the spec's defaults match the family's
        worst = max(worst, tok.count(LEAD_IN + " " + ", ".join(case.expected) + "."))
    limit = make_spec({"families": {family: params}}).decoding.max_tokens
    assert limit == default_output_limit(family, params) >= worst
    assert tok.count(LEAD_IN) < OUTPUT_LEAD_IN


def test_explicit_limit_wins_and_the_largest_family_sets_the_default() -> None:
    assert make_spec({"families": {"vartrack": {}}, "decoding": {"max_tokens": 16}}).decoding.max_tokens == 16
    both = make_spec({"families": {"niah": {}, "aggregation": {}}})
    assert both.decoding.max_tokens == default_output_limit("aggregation", {}) > OUTPUT_FLOOR
    # plain niah keeps the long-standing 48, so its run ids do not change
    assert make_spec({"families": {"niah": {}}}).decoding.max_tokens == OUTPUT_FLOOR
    # a stored spec reloads to the same limit (resume)
    assert make_spec(both.model_dump()).decoding.max_tokens == both.decoding.max_tokens
