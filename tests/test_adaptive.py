"""The adaptive sweep (ctxprobe.adaptive) on sim:decay models."""

from __future__ import annotations

from statistics import NormalDist

import pytest

from ctxprobe.adaptive import adaptive_sweep, cases_needed, coarse_depths, length_state
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.errors import CtxprobeError
from ctxprobe.results import load_report
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep import run_sweep

Z95 = NormalDist().inv_cdf(0.95)  # one-sided 95%
# Clear cliff: perfect up to 1,200 tokens, useless from 1,300.
CLIFF = "sim:decay?cliff=1200&width=100&noise=0&seed=3"


def _spec(model: str = CLIFF, **extra):
    return make_spec({"model": model, "tokenizer": "local", "lengths": [512, 1024, 2048],
                      "depths": [0.0, 0.25, 0.5, 0.75, 1.0], "reps": 6, **extra})


def _case_ids(store, run_id: str) -> set[str]:
    with Store(store) as s:
        return {r["case_id"] for r in s.iter_case_records(run_id)}


def test_coarse_depths_spread_over_the_spec() -> None:
    assert coarse_depths([0.0, 0.25, 0.5, 0.75, 1.0]) == [0.0, 0.5, 1.0]
    assert coarse_depths([0.0, 1.0]) == [0.0, 1.0]
    assert coarse_depths([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]) == [0.0, 0.4, 1.0]


def test_cases_needed_hand_computed() -> None:
    # all correct: lower bound n / (n + z²) >= 0.856 needs n >= 0.856·2.70554 / 0.144 = 16.08 -> 17
    assert cases_needed(1.0, 0.856, Z95, 500) == 17
    assert wilson_interval(17, 17, Z95)[0] >= 0.856 > wilson_interval(16, 16, Z95)[0]
    assert cases_needed(0.0, 0.856, Z95, 500) == 1  # upper bound z²/(1+z²) = 0.73 < 0.856
    assert cases_needed(0.856, 0.856, Z95, 60) == 60  # at the bar: never decided, capped


def test_length_state_boundary_is_greater_or_equal() -> None:
    # a lower bound exactly at the bar passes (clears = mean >= threshold, here for the bound)
    lo = wilson_interval(17, 17, Z95)[0]
    assert length_state([1.0] * 17, 6, 512, lo, Z95).state == "pass"
    assert length_state([1.0] * 17, 6, 512, lo + 1e-9, Z95).state == "open"
    assert length_state([], 2, 512, 0.856, Z95).state == "open"


def test_bad_arguments() -> None:
    with pytest.raises(CtxprobeError):
        adaptive_sweep(_spec(), "unused.sqlite", confidence=1.5)
    with pytest.raises(CtxprobeError):
        adaptive_sweep(_spec(), "unused.sqlite", coarse_reps=5, max_reps=2)


def test_reaches_the_fixed_grid_decision_with_fewer_tokens(tmp_path) -> None:
    spec = _spec()
    grid = run_sweep(spec, tmp_path / "grid.sqlite", progress=False)
    grid_eff = load_report(grid.run_id, tmp_path / "grid.sqlite").profiles[0].effective_length
    with Store(tmp_path / "grid.sqlite") as s:
        grid_tokens = sum(r.token_count for r in s.result_rows(grid.run_id))
    assert grid_eff == 1024

    store = tmp_path / "adaptive.sqlite"
    result = adaptive_sweep(spec, store)
    assert result.decided and result.stop_reason == "confident"
    assert result.families[0].effective_length == grid_eff
    assert result.families[0].grid_effective_length == grid_eff
    assert result.tokens_spent < 0.5 * grid_tokens
    states = {s.length: s.state for s in result.families[0].lengths}
    assert states == {512: "pass", 1024: "pass", 2048: "fail"}
    # reps went where the decision needed them: not to the length failing outright
    reps = {s.length: s.reps for s in result.families[0].lengths}
    assert reps[2048] == 2 and reps[512] > 2 and reps[1024] > 2
    # the run is an ordinary run: report reads it, the adaptive decision is on record
    report = load_report(result.run_id, store)
    assert report.profiles[0].effective_length == grid_eff
    assert report.run.meta["adaptive"]["decided"] is True and report.run.status == "complete"

    # resumable: rerunning sends nothing and decides the same
    again = adaptive_sweep(spec, store)
    assert again.families[0].effective_length == grid_eff and again.cases == result.cases
    # an interrupted run (here: stopped by a small budget) resumes to the same cases
    resumed = tmp_path / "resumed.sqlite"
    cut = adaptive_sweep(spec, resumed, token_budget=20_000)
    assert cut.stop_reason == "budget" and not cut.decided and cut.tokens_spent <= 20_000
    done = adaptive_sweep(spec, resumed)
    assert done.decided and _case_ids(resumed, done.run_id) == _case_ids(store, result.run_id)


def test_bisection_locates_the_cliff_between_grid_lengths(tmp_path) -> None:
    spec = _spec("sim:decay?cliff=1700&width=100&noise=0&seed=3", lengths=[1024, 2048])
    result = adaptive_sweep(spec, tmp_path / "b.sqlite", bisect=1)
    fam = result.families[0]
    assert result.decided
    assert [s.length for s in fam.lengths] == [1024, 1536, 2048]
    assert fam.effective_length == 1536 and fam.grid_effective_length == 1024
