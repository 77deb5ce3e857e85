"""``multihop`` through the real pipeline with sims, and independent checks of its cases."""

from __future__ import annotations

import math
import re

import pytest

from ctxprobe.haystack import split_sentences
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell, Case
from ctxprobe.haystack.context import BuildContext
from ctxprobe.families.multihop.task import Multihop, MultihopParams, second_hop_depth
from ctxprobe.haystack.overlap import STOPWORDS
from ctxprobe.tokenizers import resolve_tokenizer

LENGTHS = "512,1k,2k"
DEPTHS = "0,0.25,0.5,0.75,1"


def _sweep(model: str, store, params: dict | None = None, depths: str = DEPTHS):
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": LENGTHS, "depths": depths, "reps": 2,
                      "families": {"multihop": params if params is not None else {"distractors": 3}}})
    result = run_sweep(spec, store, progress=False)
    return result, load_report(result.run_id, store).profiles[0]


def test_perfect_scores_one_everywhere(tmp_path) -> None:
    _, prof = _sweep("sim:perfect", tmp_path / "s.sqlite")
    assert len(prof.cells) == 15
    assert all(c.mean == 1.0 and c.n == 2 for c in prof.cells)
    assert prof.effective_length == 2048


def test_echo_scores_zero_with_distractors(tmp_path) -> None:
    _, prof = _sweep("sim:echo", tmp_path / "s.sqlite")
    assert all(c.mean == 0.0 for c in prof.cells)


def test_first_half_reader_fails_when_evidence_is_in_the_second_half(tmp_path) -> None:
    _, late = _sweep("sim:first-half", tmp_path / "a.sqlite", {"second_depth": 0.9}, depths="0,0.2,0.3")
    assert all(c.mean == 0.0 for c in late.cells)
    assert all(set(c.outcomes) == {"not_found"} for c in late.cells)
    # the same reader succeeds when both facts sit in the first half: the failure is positional
    _, early = _sweep("sim:first-half", tmp_path / "b.sqlite", {"second_depth": 0.1}, depths="0,0.2,0.3")
    assert all(c.mean == 1.0 for c in early.cells)


def test_blind_middle_misses_chains_with_a_hidden_fact(tmp_path) -> None:
    # default gap 0.5: one of the two facts is always in the hidden middle half
    _, prof = _sweep("sim:blind-middle", tmp_path / "s.sqlite", {"distractors": 1})
    assert all(c.mean == 0.0 for c in prof.cells)


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOPWORDS}


def test_exported_cases_recheck(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    result, _ = _sweep("sim:perfect", store)
    tok = resolve_tokenizer("local")
    n = 0
    for rec in iter_export(result.run_id, store):
        n += 1
        meta = rec["meta"]
        # exact budget, recounted from the stored messages
        recount = tok.count_chat(rec["messages"])
        assert recount == rec["token_count"] <= rec["length"]
        content = rec["messages"][-1]["content"]
        hay = content.split("\n\n")[1]
        longest = max(tok.count(" " + s) for s in split_sentences(hay))
        assert rec["length"] - recount <= max(math.ceil(0.01 * rec["length"]), longest)
        # the question (last paragraph) shares no content word with the second fact
        question = content.rsplit("\n\n", 1)[1]
        assert question == meta["question"]
        assert not _content(question) & _content(meta["second_fact"])
        assert _content(question) & _content(meta["needle"])  # the first hop is reached by name
        # every city appears exactly once, where it was placed; the target org twice
        for city in rec["expected"] + rec["distractors"]:
            assert len(re.findall(rf"\b{city}\b", content)) == 1
        assert len(rec["distractors"]) == 3
        assert content.count(meta["org"]) == 2 and meta["org"] not in question
        # both facts sit where the case says
        ids = tok.encode_chat(rec["messages"])
        for pos, text in ((rec["needle_token_pos"], meta["needle"]), (meta["second_token_pos"], meta["second_fact"])):
            want = tok.encode(" " + text)
            assert ids[pos: pos + len(want)] == want or ids[pos: pos + len(tok.encode(text))] == tok.encode(text)
        assert abs(rec["realised_depth"] - rec["depth"]) < 0.05
        second = second_hop_depth(rec["depth"], MultihopParams())
        assert abs(meta["second_realised_depth"] - second) < 0.05 and abs(second - rec["depth"]) == 0.5
    assert n == 30


def test_depths_of_a_group_share_names_and_filler() -> None:
    fam = Multihop(BuildContext(resolve_tokenizer("local"), None))
    a = fam.generate(Cell("multihop", 1024, 0.0), 0, seed=5, params=MultihopParams())
    b = fam.generate(Cell("multihop", 1024, 1.0), 0, seed=5, params=MultihopParams())
    c = fam.generate(Cell("multihop", 1024, 1.0), 1, seed=5, params=MultihopParams())
    assert a.expected == b.expected and a.meta["question"] == b.meta["question"]
    assert c.expected != a.expected  # another repetition: fresh names


QUESTION = "In which city is Orlan Vesk's workplace located? Answer with the name of the city only."


def _case() -> Case:
    return Case(cell=Cell("multihop", 512, 0.5), rep=0, seed=0, messages=[], expected=["Quilport"],
                distractors=["Varnby", "Skelholm"], meta={"org": "Tamber lab", "question": QUESTION})


@pytest.mark.parametrize(("output", "score", "outcome"), [
    ("Quilport", 1.0, "correct"),
    ("It is in quilport.", 1.0, "correct"),
    ("Quilport, Varnby", 0.0, "distractor"),
    ("Quilportia", 0.0, "wrong"),
    ("", 0.0, "empty"),
    ("I could not find it.", 0.0, "not_found"),
    # committed answers stay correct, including an echo of the question (small models do that)
    ("Orlan Vesk's workplace is in Quilport.", 1.0, "correct"),
    (QUESTION + " Quilport", 1.0, "correct"),
    ("In which city is Orlan Vesk's workplace located? Quilport", 1.0, "correct"),
    ("Quilport is nowhere near the coast", 1.0, "correct"),  # 'nowhere' is not 'no'
    ("Quilport (Norway-like)", 1.0, "correct"),  # 'Nor' inside a word is not 'nor'
    # negated: the measured finding, verbatim, and one-word variants of it
    ("The city is not Tepir Urnnast's workplace located in the city of Quilport.", 0.0, "wrong"),
    ("It isn't Quilport.", 0.0, "wrong"),
    ("It isn’t Quilport.", 0.0, "wrong"),
    ("No, Quilport.", 0.0, "wrong"),
    ("Never Quilport", 0.0, "wrong"),
    ("Neither the Tamber lab nor Quilport", 0.0, "wrong"),
    ("It cannot be Quilport", 0.0, "wrong"),
    # hedged
    ("Maybe Quilport.", 0.0, "wrong"),
    ("Probably Quilport", 0.0, "wrong"),
    ("I think it is Quilport.", 0.0, "wrong"),
    ("It might be Quilport", 0.0, "wrong"),
    ("It seems to be Quilport", 0.0, "wrong"),
    # more than one candidate
    ("Quilport or Tamberton", 0.0, "wrong"),
    ("Either Quilport or the Tamber lab's other office", 0.0, "wrong"),
    ("Quilport and Skelholm", 0.0, "distractor"),
])
def test_strict_scoring(output: str, score: float, outcome: str) -> None:
    fam = Multihop(BuildContext(resolve_tokenizer("local"), None))
    s = fam.score(_case(), output)
    assert (s.score, s.outcome) == (score, outcome)


@pytest.mark.parametrize(("output", "reason"), [
    ("Quilport? No.", "negated"), ("Perhaps Quilport", "hedged"), ("Quilport or Holmby", "alternatives"),
])
def test_uncommitted_answers_say_why(output: str, reason: str) -> None:
    s = Multihop(BuildContext(resolve_tokenizer("local"), None)).score(_case(), output)
    assert s.score == 0.0 and s.detail == {reason: True}


def test_templates_cannot_trigger_the_commitment_rules() -> None:
    """The echo removal is belt and braces: no template the prompt shows contains a negation,
    hedge or alternative word, so echoing any part of the prompt never costs a point."""
    from ctxprobe.families.multihop.task import ANSWER_FORMAT, INSTRUCTION, QUESTIONS, uncommitted
    for text in (INSTRUCTION, ANSWER_FORMAT, *QUESTIONS):
        assert uncommitted(text.format(person="Orlan Vesk"), []) == {}


def test_naming_the_organisation_only_is_marked() -> None:
    s = Multihop(BuildContext(resolve_tokenizer("local"), None)).score(_case(), "The Tamber lab.")
    assert s.score == 0.0 and s.detail == {"stopped_at_first_hop": True}


def test_second_depth_parameters() -> None:
    assert second_hop_depth(0.2, MultihopParams(gap=0.3)) == pytest.approx(0.5)
    assert second_hop_depth(0.9, MultihopParams(gap=0.3)) == pytest.approx(0.6)
    assert second_hop_depth(0.9, MultihopParams(gap=0.95)) == 0.0
    assert second_hop_depth(0.9, MultihopParams(second_depth=0.1)) == 0.1


@pytest.mark.parametrize(("output", "detail"), [
    ("Tamber.", {"stopped_at_first_hop": True}),  # the organisation's own name (its first word) is enough
    ("It is a lab somewhere.", {}),  # "lab" alone names no organisation
    ("No idea.", {}),
])
def test_stopped_at_first_hop_needs_the_organisation_name(output: str, detail: dict) -> None:
    s = Multihop(BuildContext(resolve_tokenizer("local"), None)).score(_case(), output)
    assert s.score == 0.0 and s.detail == detail


def test_a_case_without_an_organisation_never_says_first_hop() -> None:
    case = _case()
    case = Case(cell=case.cell, rep=0, seed=0, messages=[], expected=case.expected, distractors=case.distractors,
                meta={"question": QUESTION})
    s = Multihop(BuildContext(resolve_tokenizer("local"), None)).score(case, "Somewhere.")
    assert s.score == 0.0 and s.detail == {}
