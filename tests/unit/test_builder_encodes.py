"""Every family records the full-prompt encodes its case cost (``meta.encodes``), and a
case's ids are an encode of exactly its messages (phonebook reuses its sizing encode)."""

from __future__ import annotations

import pytest

from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer


@pytest.mark.parametrize("family,params,depth", [
    ("niah", {}, 0.5), ("vartrack", {}, 0.5), ("multihop", {}, 0.5),
    ("aggregation", {"variant": "common-words"}, 0.5), ("aggregation", {"variant": "frequent-words"}, 0.5),
    ("phonebook", {}, 0.0), ("phonebook", {"shards": 2}, 0.0), ("ruler", {"task": "niah_single_1"}, 0.5),
])
def test_encodes_recorded_and_ids_exact(family: str, params: dict, depth: float) -> None:
    tok = resolve_tokenizer("local")
    fam = make_family(family, BuildContext(tokenizer=tok, haystack=None))
    p = validate_params(family, params)
    reps = 2 if params.get("shards") == 2 else 1
    cases = [fam.generate(Cell(family, 2048, depth), rep, seed=7, params=p) for rep in range(reps)]
    for case in cases:
        assert isinstance(case.meta.get("encodes"), int)
        assert case.prompt_ids == tok.encode_chat(case.messages) and case.token_count == len(case.prompt_ids)
        assert case.token_count <= 2048
    if family == "phonebook" and reps == 2:
        # the two shards of one book: the sizing is solved once, each shard encodes its own prompt
        assert cases[1].meta["encodes"] == 1 and cases[0].meta["encodes"] >= 2
    elif family == "phonebook":
        assert case.meta["encodes"] >= 1
