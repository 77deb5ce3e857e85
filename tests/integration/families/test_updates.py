"""The ``updates`` family (PI-LLM's proactive interference): its prompt in PI-LLM's words,
its per-key scoring with the ``stale`` outcome, its sims, and the report's fit of accuracy
against ln U, whose interval must hold the sim's stated slope."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

from ctxprobe.core.case import Cell
from ctxprobe.core.outcome import Outcome
from ctxprobe.families.updates.analysis import bootstrap_slope, fit_records, ols_slope
from ctxprobe.families.updates.score import answered_value, score_updates
from ctxprobe.report.load import report_json
from ctxprobe.spec import make_spec, merge_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer
from stub_records import stub_records

HISTORY = {"Fruit": ["11111", "22222", "33333"], "Tool": ["44444", "55555"]}


def _case(params: dict, length: int = 1024, rep: int = 0, depth: float = 0.5, no_context: bool = False):
    ctx = BuildContext(tokenizer=resolve_tokenizer("approx"), haystack=None, no_context=no_context)
    fam = make_family("updates", ctx)
    return fam, fam.generate(Cell("updates", length, depth), rep, seed=3, params=validate_params("updates", params))


def test_prompt_is_pi_llm_s_wording() -> None:
    _, case = _case({"keys": [2], "updates": [3]})
    text = case.messages[0]["content"]
    keys = case.meta["keys"]
    # PI-LLM's instruction and question (core/pi_flow_upgrade.py), written out here by hand
    assert text.startswith("As my secretary, I need you to carefully read a text stream where the values of multiple "
                           f"keys are being continuously updated. The 2 keys to track include {keys[0]}, {keys[1]}. "
                           "I will ask you to identify the value of each key later.")
    assert text.endswith(f"What are the current value of each key ({keys[0]}, {keys[1]}) you are tracking? "
                         "End your response with: 'The current value of <key> is <value>.'")
    assert "The text stream starts on the next line.\n" in text
    pairs = re.findall(r"([A-Z][a-z]+): (\d{5}); ?", text)
    assert len(pairs) == 6 and all(a[0] != b[0] for a, b in zip(pairs, pairs[1:]))  # no key twice in a row
    assert {k: [v for kk, v in pairs if kk == k] for k in keys} == case.meta["history"]


def test_forget_prompt_precedes_every_update_but_the_first() -> None:
    _, case = _case({"keys": [3], "updates": [4], "forget": True})
    text = case.messages[0]["content"]
    for key in case.meta["keys"]:
        assert text.count(f"forget all the previous updates to {key}; {key}: ") == 3
        first = text.index(f"{key}: ")
        assert f"forget all the previous updates to {key}; " not in text[:first]


def test_grid_points_cycle_keys_outer() -> None:
    params = validate_params("updates", {"keys": "1,2", "updates": "3,10,30"})
    assert params.keys == [1, 2] and params.updates == [3, 10, 30]
    got = []
    for rep in range(7):
        _, case = _case({"keys": [1, 2], "updates": [3, 10, 30]}, length=2048, rep=rep)
        got.append((case.meta["n_keys"], case.meta["updates_per_key"]))
    assert got == [(1, 3), (1, 10), (1, 30), (2, 3), (2, 10), (2, 30), (1, 3)]


def test_a_stream_too_long_for_the_length_is_a_one_line_error() -> None:
    from ctxprobe.errors import CtxprobeError

    with pytest.raises(CtxprobeError, match="length 512"):
        _case({"keys": [8], "updates": [100]}, length=512)


def test_answer_reading_follows_pi_llm_s_verbal_then_colon_rule() -> None:
    assert answered_value("The current value of Fruit is 33333.", "Fruit") == "33333"
    assert answered_value("the CURRENT value of fruit is '33333'", "Fruit") == "33333"
    # the last verbal statement wins; a verbal statement beats a colon one
    assert answered_value("Fruit: 11111\nThe current value of Fruit is 22222. The current value of Fruit is 33333.",
                          "Fruit") == "33333"
    assert answered_value("The current value of Fruit is 22222.\nFruit: 33333", "Fruit") == "22222"
    assert answered_value("Fruit: 33333", "Fruit") == "33333"
    assert answered_value("Grapefruit: 33333", "Fruit") is None  # a key inside a longer word is not the key
    assert answered_value("nothing here", "Fruit") is None


def test_a_value_inside_a_longer_number_is_not_that_value() -> None:
    s = score_updates(["Fruit"], HISTORY, "The current value of Fruit is 333334.")
    assert s.detail["keys"][0]["answered"] == "333334" and s.outcome == Outcome.WRONG
    s = score_updates(["Fruit"], HISTORY, "The current value of Fruit is 3333.")
    assert s.outcome == Outcome.WRONG


def test_stale_distractor_wrong_and_missing_per_key() -> None:
    s = score_updates(["Fruit", "Tool"], HISTORY, "The current value of Fruit is 11111.\nThe current value of Tool is 55555.")
    assert s.score == 0.5 and s.outcome == Outcome.PARTIAL
    assert [k["outcome"] for k in s.detail["keys"]] == ["stale", "correct"]
    assert s.detail["keys"][0]["updates_back"] == 2 and s.detail["key_outcomes"] == {"correct": 1, "stale": 1}
    s = score_updates(["Fruit", "Tool"], HISTORY, "The current value of Fruit is 22222. The current value of Tool is 33333.")
    assert s.score == 0.0 and s.outcome == Outcome.STALE  # stale first, then distractor
    assert [k["outcome"] for k in s.detail["keys"]] == ["stale", "distractor"]
    s = score_updates(["Fruit", "Tool"], HISTORY, "The current value of Tool is 33333.")
    assert s.outcome == Outcome.DISTRACTOR and s.detail["keys"][0]["outcome"] == "not_found"
    assert score_updates(["Fruit"], HISTORY, "").outcome == Outcome.EMPTY
    assert score_updates(["Fruit"], HISTORY, "I do not know").outcome == Outcome.NOT_FOUND
    ok = score_updates(["Fruit", "Tool"], HISTORY, "Fruit: 33333; Tool: 55555")
    assert ok.score == 1.0 and ok.outcome == Outcome.CORRECT


def test_no_context_twin_states_no_value() -> None:
    _, case = _case({"keys": [2], "updates": [3]}, no_context=True)
    text = case.messages[0]["content"]
    assert case.meta["no_context"] and not re.search(r"\d{5}", text)
    assert "What are the current value of each key" in text


def test_ols_and_bootstrap_by_hand() -> None:
    assert ols_slope([0.0, 1.0, 2.0], [1.0, 0.8, 0.6]) == pytest.approx((-0.2, 1.0))
    assert ols_slope([1.0, 1.0], [0.0, 1.0]) is None
    strata = {0: [(0.0, 1.0)] * 5, 1: [(1.0, 0.5)] * 5}
    assert bootstrap_slope(strata, resamples=50) == pytest.approx((-0.5, -0.5))


def test_the_bootstrap_keeps_each_k_s_share_of_a_stratum() -> None:
    """With K an axis too, the resamples keep every (length, K, U) cell's cases: here K
    alone decides the score (K = 1 always right, K = 4 always wrong), so no resample can
    tilt the curve and the interval is the slope itself, 0."""
    records = stub_records({"family": "updates", "length": 2048, "score": 1.0 if k == 1 else 0.0, "outcome": "correct",
                            "meta": {"updates_per_key": u, "n_keys": k}, "detail": {"keys": []}}
                           for u in (3, 10, 30) for k in (1, 4) for _ in range(5))
    fit = fit_records(records)["updates"]
    assert fit.slope == pytest.approx(0.0) and (fit.low, fit.high) == pytest.approx((0.0, 0.0))
    assert [p.accuracy for p in fit.points] == [0.5, 0.5, 0.5]


def test_the_slope_interval_covers_the_truth_in_simulation() -> None:
    """Coverage of the stratified bootstrap at a small design (5 U levels × 8 cases × 4
    keys, per-key P(correct) = 1 − 0.15 ln U), measured: the nominal 95% interval holds
    −0.15 in at least 70 of 80 simulated runs. A percentile bootstrap under-covers a little
    at strata this small: 300 runs of this design covered 0.91 (0.95 at 12 cases a
    stratum), the figure docs/families.md gives."""
    rng = random.Random(7)
    truth, us = -0.15, (2, 4, 8, 16, 32)
    hits = 0
    for _ in range(80):
        strata = {u: [(math.log(u), sum(rng.random() < 1 + truth * math.log(u) for _ in range(4)) / 4)
                      for _ in range(8)] for u in us}
        lo, hi = bootstrap_slope(strata, resamples=300, seed=rng.randrange(10**6)) or (0.0, 0.0)
        hits += lo <= truth <= hi
    assert hits >= 70


def _sweep(store: Path, model: str, params: dict, lengths: str = "2k", reps: int = 10, **more):
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": lengths, "depths": "0,0.5,1", "reps": reps,
                      "families": {"updates": params}, **more})
    return run_sweep(spec, store, progress=False).run_id


def test_perfect_scores_one_from_1k_to_8k(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _sweep(store, "sim:perfect", {"keys": [3], "updates": [3, 20]}, lengths="1k,2k,4k,8k", reps=2)
    report = report_json([run_id], store)
    for length in report["profiles"][0]["lengths"]:
        assert length["mean"] >= 0.99 and length["n"] == 6


def test_interference_slope_is_recovered_and_stale_counts_the_overwritten(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    us = [2, 4, 8, 16, 32]
    run_id = _sweep(store, "sim:interference?slope=0.15", {"keys": [4], "updates": us}, reps=20)
    with Store(store) as s:
        records = list(s.iter_case_records(run_id))
    fit = fit_records(records)["updates"]
    assert fit.low is not None and fit.high is not None and fit.low <= -0.15 <= fit.high
    assert fit.high < 0  # the interval excludes "no interference"
    keys = [k for r in records for k in r["detail"]["keys"]]
    assert {k["outcome"] for k in keys} == {"correct", "stale"}  # every miss is an overwritten value
    assert sum(p.key_outcomes.get("stale", 0) for p in fit.points) == sum(k["outcome"] == "stale" for k in keys) > 0
    assert [p.updates for p in fit.points] == us and all(p.n == 12 for p in fit.points)
    shown = report_json([run_id], store)["updates"]["updates"]  # the JSON report: the family's label, then the fit's
    assert shown["slope_95ci"] == [fit.low, fit.high] and shown["slope_per_ln_updates"] == fit.slope
    assert [p["key_outcomes"] for p in shown["points"]] == [p.key_outcomes for p in fit.points]


def test_forget_variant_is_paired_and_floor_builds(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    spec = merge_spec(values={"model": "sim:perfect", "tokenizer": "local", "lengths": "1k", "depths": "0.5",
                              "reps": 2, "baseline": "no-context"},
                      family="updates", params=["updates.updates=3,10", "updates.keys=2"],
                      variants="plain,forget:forget=true")
    run_id = run_sweep(spec, store, progress=False).run_id
    with Store(store) as s:
        records = list(s.iter_case_records(run_id))
    by = {(r["family"], r["rep"]): r for r in records}
    for rep in range(2):
        plain, forget = by[("updates~plain", rep)], by[("updates~forget", rep)]
        assert plain["meta"]["history"] == forget["meta"]["history"]
        assert "forget all the previous updates" in forget["messages"][0]["content"]
        assert "forget all the previous updates" not in plain["messages"][0]["content"]
        assert plain["score"] == forget["score"] == 1.0
    floors = [r for r in records if r["family"].endswith("@no-context")]
    assert floors and all(r["score"] == 0.0 for r in floors)
    # the JSON report carries the curve once, under the family's name, one fit per variant
    report = report_json([run_id], store)
    assert sorted(report["updates"]) == ["updates~forget", "updates~plain"]
    assert "updates~plain" not in report and "updates~forget" not in report
