"""Position bias stated: the middle's deficit against the edges per length (Newcombe's
paired interval) and whether it grows with length (a permutation test), checked by hand
against a published example, on synthetic rows whose truth is known, and on sims through
the real pipeline (a blind middle must be found, a flat model must not)."""

from __future__ import annotations

import json

import pytest

from ctxprobe.analysis.position import growth_test, paired_deficit, position_bias
from ctxprobe.core.rows import ResultRow
from ctxprobe.report.load import load_report
from ctxprobe.report.position import position_line
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)


def test_newcombe_method_10_published_example() -> None:
    # Newcombe (1998), "Improved confidence intervals for the difference between binomial
    # proportions based on paired data", Table II: pairs (+,+) 36, (+,-) 12, (-,+) 2,
    # (-,-) 0; method 10 (square-and-add on Wilson intervals, with phi) gives 0.0569 to 0.3404.
    reps = [(1.0, 1.0)] * 36 + [(1.0, 0.0)] * 12 + [(0.0, 1.0)] * 2
    edge, middle, d, lo, hi, _phi = paired_deficit(48, 50, 38, 50, reps)
    assert (edge, middle) == (0.96, 0.76)
    assert d == pytest.approx(0.2)
    assert (round(lo, 4), round(hi, 4)) == (0.0569, 0.3404)


def rows(accuracy: dict[tuple[int, float], float], reps: int = 20, family: str = "niah") -> list[ResultRow]:
    """``reps`` cases per cell, the first round(acc × reps) correct."""
    out = []
    for (length, depth), acc in accuracy.items():
        right = round(acc * reps)
        out += [ResultRow(family, length, depth, r, "correct" if r < right else "wrong", float(r < right))
                for r in range(reps)]
    return out


def grid(middle_at: dict[int, float]) -> dict[tuple[int, float], float]:
    return {(L, d): (1.0 if d in (0.0, 1.0) else m) for L, m in middle_at.items() for d in DEPTHS}


def test_growing_sag_is_found_and_a_constant_one_is_not() -> None:
    growing = position_bias(rows(grid({1024: 0.95, 2048: 0.8, 4096: 0.6, 8192: 0.4})))[0]
    assert [d.verdict for d in growing.lengths] == ["no difference", "weaker", "weaker", "weaker"]
    assert growing.growth is not None and growing.growth.grows and growing.growth.slope > 0
    assert growing.growth.p_value < 0.01
    constant = position_bias(rows(grid({1024: 0.6, 2048: 0.6, 4096: 0.6, 8192: 0.6})))[0]
    assert all(d.verdict == "weaker" for d in constant.lengths)
    assert constant.growth is not None and not constant.growth.grows
    shrinking = position_bias(rows(grid({1024: 0.4, 2048: 0.6, 4096: 0.8, 8192: 0.95})))[0]
    assert shrinking.growth is not None and not shrinking.growth.grows and shrinking.growth.slope < 0


def test_middle_stronger_is_said() -> None:
    stronger = position_bias(rows({(1024, d): (0.2 if d in (0.0, 1.0) else 1.0) for d in DEPTHS}))[0]
    assert stronger.lengths[0].verdict == "stronger"
    assert "stronger than the edges at 1K" in position_line(stronger)
    assert stronger.growth is None  # one length: not tested
    assert "not tested" in position_line(stronger)


def test_which_depths_are_middle_and_edges() -> None:
    # 0.25 and 0.75 are in the middle (closed range); 0.2 and 0.8 are neither
    found = position_bias(rows({(1024, d): 1.0 for d in (0.0, 0.2, 0.25, 0.5, 0.75, 0.8, 1.0)}))[0]
    assert found.edges == (0.0, 1.0) and found.middle == (0.25, 0.5, 0.75)
    assert found.lengths[0].n_edge == 40 and found.lengths[0].n_middle == 60
    # a grid with only the edges and depths outside the middle has no statistic
    assert position_bias(rows({(1024, d): 1.0 for d in (0.0, 0.1, 0.9, 1.0)})) == []
    assert position_bias(rows({(1024, d): 1.0 for d in (0.0, 1.0)})) == []


def test_harness_failures_are_left_out() -> None:
    base = rows({(1024, d): 1.0 for d in DEPTHS}, reps=5)
    errors = [ResultRow("niah", 1024, 0.5, r, "error", None) for r in range(5, 10)]
    found = position_bias(base + errors)[0]
    assert found.lengths[0].n_middle == 15


def test_permutation_p_is_one_for_ties() -> None:
    flat = growth_test([(10.0, 0.0), (11.0, 0.0), (12.0, 0.0)])
    assert flat is not None and flat.p_value == 1.0 and not flat.grows
    assert growth_test([(10.0, 0.3), (10.0, 0.5)]) is None  # one length


def _report(model: str, tmp_path) -> object:
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": "1k,2k,4k", "depths": "0,0.25,0.5,0.75,1",
                      "reps": 5, "families": {"niah": {}}})
    store = tmp_path / "s.sqlite"
    return load_report(run_sweep(spec, store, progress=False).run_id, store)


def test_blind_middle_sim_is_weaker_in_the_middle(tmp_path) -> None:
    report = _report("sim:blind-middle", tmp_path)
    data = json.loads(json.dumps(report.to_dict()))  # type: ignore[attr-defined]
    (bias,) = data["position_bias"]
    assert all(d["verdict"] == "weaker" and d["lo"] > 0 for d in bias["lengths"])
    assert any(n.startswith("position (niah): the middle (25%, 50%, 75%) is weaker than the edges") for n in data["notes"])


@pytest.mark.parametrize("model", ["sim:perfect", "sim:decay?cliff=100000&noise=0.3&seed=3"])
def test_flat_sims_show_no_difference(tmp_path, model: str) -> None:
    report = _report(model, tmp_path)
    (bias,) = report.to_dict()["position_bias"]  # type: ignore[attr-defined]
    assert all(d["verdict"] == "no difference" and d["lo"] < 0 < d["hi"] for d in bias["lengths"])
    assert bias["growth"]["grows"] is False
