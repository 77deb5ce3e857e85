"""Per-family bars: --bars FAMILY=BAR and the spec key `bars`, RULER's 0.856 by default,
NoLiMa's relative rule by name; the same in run, report and decide."""

from __future__ import annotations

import json
import math

import pytest

from decide_sims import run_sim
from ctxprobe.analysis.bars import family_bar
from ctxprobe.analysis.bootstrap import ThresholdRule
from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import make_spec
from ctxprobe.spec.threshold import check_bar, parse_bars
from ctxprobe.sweep.adaptive import adaptive_sweep


def test_bars_parse_by_number_and_by_name() -> None:
    assert parse_bars("niah=0.9, vartrack=nolima,multihop=ruler") == {
        "niah": 0.9, "vartrack": "relative:0.85", "multihop": 0.856}
    assert check_bar("relative") == "relative:0.85" and check_bar("relative:0.7") == "relative:0.7"
    assert check_bar(1) == 1.0 and check_bar("1") == 1.0  # the top of (0, 1] is a bar
    assert ThresholdRule.parse("nolima") == ThresholdRule("relative", 0.85)
    assert ThresholdRule.parse("ruler") == ThresholdRule("absolute", 0.856)


@pytest.mark.parametrize("text", ["niah", "niah=", "=0.9", "niah=0", "niah=1.0001", "niah=abc", "niah=relative:0",
                                  "niah=relative:1.5", "niah=nan"])
def test_bad_bars_are_one_line_errors(text: str) -> None:
    with pytest.raises(CtxprobeError) as err:
        parse_bars(text)
    assert "\n" not in str(err.value)


def test_relative_bar_is_a_share_of_the_shortest_score() -> None:
    assert family_bar("relative:0.85", 0.8) == pytest.approx(0.68)
    assert family_bar("relative:0.85", 1.0) == pytest.approx(0.85)
    assert family_bar("relative:0.85", 0.0) == math.inf  # nothing to degrade from: no length clears it
    assert family_bar("relative:0.85", None) == math.inf
    assert family_bar(0.9, 0.1) == 0.9  # an absolute bar ignores the base


def test_spec_key_refuses_a_bad_bar() -> None:
    with pytest.raises(CtxprobeError):
        make_spec({"model": "sim:perfect", "bars": {"niah": 2}})
    assert make_spec({"model": "sim:perfect", "bars": "niah=nolima"}).bars == {"niah": "relative:0.85"}


def test_run_report_and_decide_use_each_familys_bar(tmp_path, capsys) -> None:
    store = tmp_path / "s.sqlite"
    # sim:decay (sim/model.py) answers right with probability 1 - noise up to its cliff
    run_id = run_sim(store, "sim:decay?cliff=3000&width=1&noise=0.2&seed=1", "1k,2k", "--family", "niah,vartrack",
                     "--reps", "4", "--bars", "niah=0.5")
    capsys.readouterr()
    assert main(["report", run_id, "--json", "--store", str(store)]) == 0
    out = json.loads(capsys.readouterr().out)
    bars = {p["family"]: p["threshold"] for p in out["profiles"]}
    assert bars == {"niah": 0.5, "vartrack": 0.856}  # the run's spec key; the others keep RULER's default
    assert out["effective_length_intervals"]["niah"]["threshold"] == 0.5
    # report --bars overrides the run's; nolima is 85% of the family's own score at its shortest length
    assert main(["report", run_id, "--json", "--bars", "niah=nolima,vartrack=0.6", "--store", str(store)]) == 0
    out = json.loads(capsys.readouterr().out)
    for prof in out["profiles"]:
        shortest = min(prof["lengths"], key=lambda s: s["length"])["mean"]
        want = 0.85 * shortest if prof["family"] == "niah" else 0.6
        assert prof["threshold"] == pytest.approx(want)
    assert main(["decide", run_id, "--json", "--bars", "vartrack=0.7", "--store", str(store)]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert {f: v["bar"] for f, v in runs[0]["families"].items()} == {"niah": 0.5, "vartrack": 0.7}


def test_the_adaptive_walk_uses_each_familys_bar(tmp_path) -> None:
    spec = make_spec({"model": "sim:echo", "tokenizer": "local", "lengths": [512, 1024], "depths": [0, 0.5, 1],
                      "families": ["niah", "vartrack"], "bars": {"niah": 0.6}})
    res = adaptive_sweep(spec, tmp_path / "a.sqlite", token_budget=20_000)
    assert {d.family: d.threshold for d in res.families} == {"niah": 0.6, "vartrack": 0.856}
