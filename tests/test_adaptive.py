"""The adaptive sweep (ctxprobe.sweep.adaptive) on sim:decay models."""

from __future__ import annotations

import math

import pytest

from ctxprobe.sweep.adaptive import adaptive_sweep, cases_needed, coarse_depths, default_budget, length_state
from ctxprobe.analysis.sequential import decide, log_evidence_fail, log_evidence_pass
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep

# Clear cliff: perfect up to 1,200 tokens, useless from 1,300.
CLIFF = "sim:decay?cliff=1200&width=100&noise=0&seed=3"
BAR = 0.856


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


def test_evidence_hand_computed() -> None:
    # all n right: M+ = (1 - bar^(n+1)) / ((n+1)(1-bar) bar^n); at level 0.01 (5 lengths, 95%) the
    # first n with M+ >= 100 is 42 (n = 41: 96.8; n = 42: 110.5)
    closed = lambda n: (1 - BAR ** (n + 1)) / ((n + 1) * (1 - BAR) * BAR ** n)  # noqa: E731
    for n in (6, 41, 42):
        assert math.exp(log_evidence_pass(n, n, BAR)) == pytest.approx(closed(n), rel=1e-10)
    assert cases_needed(1.0, BAR, 0.01, 500) == 42
    # all n wrong: M- = (1 - (1-bar)^(n+1)) / ((n+1) bar (1-bar)^n): 97.8 at n = 3, 543 at n = 4
    assert math.exp(log_evidence_fail(0, 3, BAR)) == pytest.approx(97.8, abs=0.1)
    assert cases_needed(0.0, BAR, 0.01, 500) == 4
    assert cases_needed(BAR, BAR, 0.01, 300) == 300  # at the bar: never decided, capped


def test_decision_boundary_is_greater_or_equal() -> None:
    evidence = math.exp(log_evidence_pass(40, 40, BAR))
    assert decide(40, 40, BAR, (1 / evidence) * (1 + 1e-9)) == "pass"
    assert decide(40, 40, BAR, (1 / evidence) * (1 - 1e-9)) == "open"
    assert length_state(40.0, 40, 14, 512, BAR, (1 / evidence) * (1 + 1e-9)).state == "pass"
    assert length_state(0.0, 0, 2, 512, BAR, 0.01).state == "open"


def test_default_budget_is_a_twenty_rep_grid_not_the_spec_reps() -> None:
    assert default_budget(_spec(reps=3)) == default_budget(_spec(reps=20)) == 100 * (512 + 1024 + 2048)


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
    # a 6-rep grid (30 cases a length) cannot be 95% sure of a pass; the adaptive rule needs ~42
    # cases at each passing length, and spends far less than the 20-rep grid it budgets for
    assert result.tokens_spent < 0.25 * default_budget(spec) and result.tokens_spent > grid_tokens / 2
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


# -- error control at the outcome level: the adaptive loop on Bernoulli answers ------------------


class _Bernoulli:
    """A Source answering each planned case with P(correct) by length, seeded per case."""

    def __init__(self, rates: dict[int, float], seed: int) -> None:
        self.rates, self.seed, self._rows = rates, seed, {}

    def rows(self):
        return list(self._rows.values())

    def done_ids(self):
        return set(self._rows)

    def send(self, cases) -> None:
        import random

        from ctxprobe.core.rows import ResultRow

        for c in cases:
            ok = random.Random(f"{self.seed}/{c.case_id}").random() < self.rates[c.cell.length]
            self._rows[c.case_id] = ResultRow(c.cell.family, c.cell.length, c.cell.depth, c.rep,
                                              "correct" if ok else "wrong", float(ok), c.cell.length)


@pytest.mark.parametrize("rates", [
    [0.90] * 5,  # the example: the old rule was confidently wrong in 3 of 15 seeds
    [BAR] * 5,  # exactly at the bar (clears): a confident answer must be 4K
    [0.99, 0.98, BAR - 0.02, 0.3, 0.0],  # just below the bar at 2K: truth 1K
])
def test_confident_answers_are_rarely_wrong_at_and_near_the_bar(rates: list[float]) -> None:
    from ctxprobe.sweep.adaptive import Settings, AdaptivePlan, run_adaptive
    from ctxprobe.analysis.bootstrap import ThresholdRule, walk

    lengths = [512, 1024, 2048, 3072, 4096]
    truth = walk(lengths, rates, BAR)
    wrong = confident = 0
    seeds = 40
    for seed in range(seeds):
        plan = AdaptivePlan(["niah"], lengths, [0.0, 0.5, 1.0], 2)
        decided, _, _, [fam], k = run_adaptive(plan, _Bernoulli(dict(zip(lengths, rates)), seed),
                                               ThresholdRule("absolute", BAR), Settings(), 100 * sum(lengths))
        assert k == 5
        confident += decided
        wrong += decided and fam.grid_effective_length != truth
    assert wrong <= 0.05 * seeds, f"confidently wrong in {wrong} of {seeds} seeds ({confident} confident)"


def test_clear_models_are_decided_within_the_default_budget() -> None:
    from ctxprobe.sweep.adaptive import Settings, AdaptivePlan, run_adaptive
    from ctxprobe.analysis.bootstrap import ThresholdRule

    lengths = [512, 1024, 2048, 3072, 4096]
    for rates, truth in (([1.0] * 5, 4096), ([1.0, 0.99, 0.1, 0.0, 0.0], 1024)):
        for seed in range(5):
            source = _Bernoulli(dict(zip(lengths, rates)), seed)
            decided, stop, _, [fam], _ = run_adaptive(AdaptivePlan(["niah"], lengths, [0.0, 0.5, 1.0], 2), source,
                                                      ThresholdRule("absolute", BAR), Settings(), 100 * sum(lengths))
            assert decided and stop == "confident" and fam.effective_length == truth
            assert sum(r.token_count for r in source.rows()) < 0.5 * 100 * sum(lengths)
