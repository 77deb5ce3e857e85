"""vartrack through the real pipeline: perfect reads the chain, echo and listing fail,
and every exported case re-checks independently from its prompt text."""

from __future__ import annotations

import math
import re

import pytest

from ctxprobe.haystack import split_sentences
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

PARAMS = {"hops": 3, "chains": 4}
STATEMENT = re.compile(r"(VAR_[A-Z]{5}) = (\d{5}|VAR_[A-Z]{5})\.")


def _sweep(model: str, store, params: dict = PARAMS):
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": "512,1k,2k", "depths": "0,0.5,1",
                      "reps": 2, "families": {"vartrack": params}})
    result = run_sweep(spec, store, progress=False)
    return result.run_id, load_report(result.run_id, store)


@pytest.fixture(scope="module")
def perfect(tmp_path_factory):
    store = tmp_path_factory.mktemp("vt") / "s.sqlite"
    run_id, report = _sweep("sim:perfect", store)
    return run_id, report, store


def test_perfect_scores_one_everywhere(perfect) -> None:
    _, report, _ = perfect
    cells = report.profiles[0].cells
    assert len(cells) == 9 and all(c.mean == 1.0 and c.n == 2 for c in cells)


def test_echo_scores_zero(tmp_path) -> None:
    _, report = _sweep("sim:echo", tmp_path / "e.sqlite")
    assert all(c.mean == 0.0 for c in report.profiles[0].cells)


def test_blind_middle_loses_hops_in_the_middle(tmp_path) -> None:
    run_id, report = _sweep("sim:blind-middle", tmp_path / "b.sqlite")
    recs = list(iter_export(run_id, tmp_path / "b.sqlite"))
    at_end = [r for r in recs if r["depth"] == 1.0]
    assert all(r["score"] == 1.0 for r in at_end)  # the whole chain sits in the visible end
    # the chain's first statement (the number) is in the unseen middle: nothing resolves.
    # (At 512 tokens the token-dense statements skew char positions vs token depth.)
    middle = [r for r in recs if r["depth"] == 0.5 and r["length"] >= 1024]
    assert middle and all(r["score"] == 0.0 for r in middle)
    assert any(r["outcome"] == "partial" for r in recs)
    for r in recs:
        assert r["detail"]["f1"] == r["score"] and r["detail"]["exact"] == (r["score"] == 1.0)


def _chain_holders(hay: str, value: str) -> list[str]:
    """Independent resolution: every variable whose assignments lead back to ``value``."""
    source: dict[str, str] = {}
    for name, rhs in STATEMENT.findall(hay):
        assert name not in source, f"{name} assigned twice"
        assert rhs.isdigit() or rhs in source, f"{name} copies {rhs} before it is assigned"
        source[name] = rhs

    def resolve(name: str) -> str:
        while not source[name].isdigit():
            name = source[name]
        return source[name]

    return [n for n in source if resolve(n) == value]


def test_cases_exact_to_budget_and_recheck_from_export(perfect) -> None:
    run_id, _, store = perfect
    tok = resolve_tokenizer("local")
    recs = list(iter_export(run_id, store))
    assert len(recs) == 18
    for rec in recs:
        recount = tok.count_chat(rec["messages"])
        assert recount == rec["token_count"] <= rec["length"]
        content = rec["messages"][-1]["content"]
        _, hay, question = content.split("\n\n")
        plain = STATEMENT.sub("", hay)
        longest = max(tok.count(" " + s) for s in split_sentences(plain))
        assert rec["length"] - recount <= max(math.ceil(0.01 * rec["length"]), longest)
        value = re.search(r"hold the value (\d{5})\b", question).group(1)
        holders = _chain_holders(hay, value)
        assert sorted(holders) == sorted(rec["expected"]) and len(holders) == PARAMS["hops"] + 1
        statements = STATEMENT.findall(hay)
        assert len(statements) == PARAMS["chains"] * (PARAMS["hops"] + 1)
        # nothing of a name's or value's form anywhere but in the statements and the question
        assert len(re.findall(r"VAR_", content)) == PARAMS["chains"] * (2 * PARAMS["hops"] + 1)
        values = [rhs for _, rhs in statements if rhs.isdigit()]
        assert len(set(values)) == PARAMS["chains"]
        assert sorted(re.findall(r"\d+", content)) == sorted([*values, value])
        assert set(rec["distractors"]) == {n for n, _ in statements} - set(holders)
        # depth: the chain's first statement at the cell depth (the rest follow it)
        if rec["depth"] < 1:
            assert abs(rec["realised_depth"] - rec["depth"]) < 0.06
        ids = tok.encode_chat(rec["messages"])
        first = tok.encode((" " if rec["depth"] > 0 else "") + rec["meta"]["statements"][0])
        assert ids[rec["needle_token_pos"]: rec["needle_token_pos"] + len(first)] == first


def test_listing_every_variable_is_not_full_credit() -> None:
    tok = resolve_tokenizer("local")
    fam = make_family("vartrack", BuildContext(tok, None))
    case = fam.generate(Cell("vartrack", 1024, 0.3), 1, seed=5, params=validate_params("vartrack", PARAMS))
    everything = fam.score(case, ", ".join([*case.expected, *case.distractors]))
    assert everything.outcome == "partial" and everything.score == pytest.approx(2 / (PARAMS["chains"] + 1))
    assert fam.score(case, ", ".join(case.distractors[:3])).outcome == "distractor"
    assert fam.score(case, ", ".join(x.lower() for x in case.expected)).outcome == "correct"
    half = fam.score(case, ", ".join(case.expected[:2]))
    assert half.outcome == "partial" and half.detail["recall"] == pytest.approx(2 / 4)
