"""Lexical overlap: definitions, the helper other families call, and multihop's promise."""

from __future__ import annotations

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.families.multihop import task as mh
from ctxprobe.haystack.overlap import STOPWORDS, content_words, evidence_overlap, max_overlap, overlap
from ctxprobe.tokenizers import resolve_tokenizer


def test_content_words_lowercase_alpha_minus_stopwords() -> None:
    words = content_words("In which city is Orlan Vesk's workplace located? Answer 42 times.")
    assert words == {"city", "orlan", "vesk", "workplace", "located", "answer", "times"}
    assert "s" in STOPWORDS and "which" in STOPWORDS


def test_overlap_ratio_and_shared_words() -> None:
    o = overlap("In which city is Orlan Vesk's workplace located?", "Orlan Vesk works at the Tamber lab.")
    assert o.shared == ("orlan", "vesk") and o.question_words == 5
    assert o.ratio == pytest.approx(2 / 5)
    assert overlap("What is it?", "anything").ratio == 0.0  # no content words: no division by zero
    assert overlap("Where is the Tamber lab?", "The Tamber lab is in Quilport.").ratio == 1.0


def test_evidence_overlap_rows_for_lists_and_roles() -> None:
    q = "What is the access code for the north vault?"
    rows = evidence_overlap(q, ["The access code for the north vault is Kelvor.", "Unrelated sentence."])
    assert [r["overlap"] for r in rows] == [1.0, 0.0]
    assert rows[0]["shared"] == ["access", "code", "north", "vault"]
    roles = evidence_overlap(q, {"first_hop": "north wind", "second_hop": "nothing"})
    assert [r["role"] for r in roles] == ["first_hop", "second_hop"]
    assert max_overlap(roles) == 0.25 and max_overlap([]) == 0.0


def test_multihop_templates_never_share_words_with_second_fact() -> None:
    for q in mh.QUESTIONS:
        for s in mh.SECOND_HOP:
            for kind in mh.ORG_KINDS:
                question = q.format(person="Orlan Vesk") + " " + mh.ANSWER_FORMAT
                mh.check_zero_overlap(question, s.format(org=f"Tamber {kind}", city="Quilport"))


def test_overlap_with_second_fact_is_a_generation_bug(monkeypatch) -> None:
    # a question template that leaks the organisation kind must be refused, not stored
    monkeypatch.setattr(mh, "QUESTIONS", ("In which city is the lab or agency or bureau or studio or guild "
                                          "or clinic or foundry or institute or observatory of {person}?",))
    family = mh.Multihop(BuildContext(resolve_tokenizer("local"), None))
    with pytest.raises(CtxprobeError, match="generation bug"):
        family.generate(Cell("multihop", 1024, 0.5), 0, seed=1, params=mh.MultihopParams())


def test_stored_overlap_matches_recomputation() -> None:
    family = mh.Multihop(BuildContext(resolve_tokenizer("local"), None))
    case = family.generate(Cell("multihop", 1024, 0.25), 3, seed=7, params=mh.MultihopParams())
    rows = {r["role"]: r for r in case.meta["overlap"]}
    assert rows["second_hop"]["overlap"] == 0.0 and rows["second_hop"]["shared"] == []
    person_words = set(case.meta["person"].lower().split())
    assert person_words <= set(rows["first_hop"]["shared"])  # the first hop is found by the name
