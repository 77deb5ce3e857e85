"""niah's interference variants (multikey, multivalue, multiquery) through the real pipeline."""

from __future__ import annotations

import math
import re

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import split_sentences
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

VARIANTS = {
    "multikey": {"variant": "multikey", "keys": 4},
    "multivalue": {"variant": "multivalue", "values": 4, "distractors": 2},
    "multiquery": {"variant": "multiquery", "queries": 3, "distractors": 2},
}
NEEDLE = re.compile(r"The special magic number for ([a-z]+-[a-z]+-\d+) is (\d+)\.")


def _sweep(model: str, store, params: dict) -> tuple[str, object]:
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": "512,1k,2k", "depths": "0,0.5,1",
                      "reps": 2, "families": {"niah": params}})
    result = run_sweep(spec, store, progress=False)
    return result.run_id, load_report(result.run_id, store)


@pytest.fixture(scope="module")
def perfect_runs(tmp_path_factory) -> dict[str, tuple[str, object, object]]:
    runs = {}
    for name, params in VARIANTS.items():
        store = tmp_path_factory.mktemp(name) / "s.sqlite"
        run_id, report = _sweep("sim:perfect", store, params)
        runs[name] = (run_id, report, store)
    return runs


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_perfect_scores_one_everywhere(perfect_runs, variant) -> None:
    _, report, _ = perfect_runs[variant]
    cells = report.profiles[0].cells
    assert len(cells) == 9
    assert all(c.mean == 1.0 and c.n == 2 for c in cells)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_echo_scores_zero_with_interference(tmp_path, variant) -> None:
    _, report = _sweep("sim:echo", tmp_path / "e.sqlite", VARIANTS[variant])
    cells = report.profiles[0].cells
    assert all(c.mean == 0.0 for c in cells)
    assert all(set(c.outcomes) == {"distractor"} for c in cells)


def test_blind_middle_gets_partial_credit_on_a_spread_set(tmp_path) -> None:
    run_id, report = _sweep("sim:blind-middle", tmp_path / "b.sqlite", VARIANTS["multivalue"])
    recs = list(iter_export(run_id, tmp_path / "b.sqlite"))
    partial = [r for r in recs if r["outcome"] == "partial"]
    assert partial, "values spread over the context: a sim blind to the middle sees only some"
    for r in partial:
        seen = sum(r["detail"]["per_value"].values())
        assert 0 < seen < 4
        assert 0 < r["score"] < 1
        assert r["detail"]["exact"] is False


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_cases_are_exact_to_budget_and_answers_placed_only_once(perfect_runs, variant) -> None:
    run_id, _, store = perfect_runs[variant]
    tok = resolve_tokenizer("local")
    recs = list(iter_export(run_id, store))
    assert len(recs) == 18
    for rec in recs:
        recount = tok.count_chat(rec["messages"])
        assert recount == rec["token_count"] <= rec["length"]
        content = rec["messages"][-1]["content"]
        instruction, hay, question = content.split("\n\n")
        longest = max(tok.count(" " + s) for s in split_sentences(hay))
        assert rec["length"] - recount <= max(math.ceil(0.01 * rec["length"]), longest)
        # independent re-check: parse the needles and the question from the prompt text
        bindings: dict[str, list[str]] = {}
        for key, value in NEEDLE.findall(hay):
            bindings.setdefault(key, []).append(value)
        asked = re.findall(r"[a-z]+-[a-z]+-\d+", question)
        want = [v for k in asked for v in bindings[k]]
        assert sorted(want) == sorted(rec["expected"])
        placed = [v for vs in bindings.values() for v in vs]
        assert sorted(re.findall(r"\d{5,}", content)) == sorted(placed)  # no number but the needles
        for v in placed:
            assert len(re.findall(rf"(?<!\d){v}(?!\d)", content)) == 1
        for key in bindings:  # each key only in its needles (and the question when asked)
            n = len(re.findall(rf"(?<![\w-]){re.escape(key)}(?![\w-])", content))
            assert n == len(bindings[key]) + (key in asked)
        assert set(rec["distractors"]) == set(placed) - set(want)
        if variant == "multikey":
            stem = asked[0].rsplit("-", 1)[0]
            assert len(bindings) == 4 and all(k.startswith(stem + "-") for k in bindings)
        if variant == "multivalue":
            assert len(asked) == 1 and len(bindings[asked[0]]) == 4
        if variant == "multiquery":
            assert len(asked) == 3 and all(len(bindings[k]) == 1 for k in asked)


def _case(params: dict, depth: float = 0.5):
    tok = resolve_tokenizer("local")
    fam = make_family("niah", BuildContext(tok, None))
    return fam, fam.generate(Cell("niah", 1024, depth), 0, seed=3, params=validate_params("niah", params))


def test_set_scoring_penalises_missing_and_extra_values() -> None:
    fam, case = _case(VARIANTS["multivalue"])
    e = case.expected
    assert fam.score(case, ", ".join(e)).outcome == "correct"
    missing = fam.score(case, ", ".join(e[:2]))
    assert missing.outcome == "partial" and missing.score == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert missing.detail["per_value"] == {v: v in e[:2] for v in e}
    extra = fam.score(case, ", ".join(e) + ", 1234567")
    assert extra.outcome == "partial" and extra.score < 1 and extra.detail["extras"] == ["1234567"]
    assert fam.score(case, ", ".join([*e, case.distractors[0]])).outcome == "distractor"
    assert fam.score(case, "").outcome == "empty"


def test_multivalue_depths_spread_from_the_cell_depth() -> None:
    _, case = _case(VARIANTS["multivalue"], depth=0.25)
    depths = [n["depth"] for n in case.meta["needles"]]
    assert depths == [0.25, 0.5, 0.75, 0.0]
    offsets = [n["token_offset"] for n in case.meta["needles"]]
    assert offsets[3] < offsets[0] < offsets[1] < offsets[2]


def test_multiquery_per_key_detail() -> None:
    fam, case = _case(VARIANTS["multiquery"])
    needles = case.meta["needles"]
    scored = fam.score(case, needles[0]["value"])
    assert scored.outcome == "partial"
    assert scored.detail["per_key"] == {n["key"]: i == 0 for i, n in enumerate(needles)}


def test_single_stays_the_default_and_knobs_belong_to_their_variant() -> None:
    _, case = _case({})
    assert case.meta["variant"] == "single" and len(case.expected) == 1
    with pytest.raises(CtxprobeError, match="variant=multivalue"):
        validate_params("niah", {"values": 3})
    with pytest.raises(CtxprobeError, match="variant"):
        validate_params("niah", {"variant": "multi"})
