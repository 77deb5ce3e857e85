"""The adaptive sweep (ctxprobe.sweep.adaptive) on sim:decay models."""

from __future__ import annotations

import math
import random

import pytest

from ctxprobe.analysis.sequential import _spread_bet, decide, evidence, levels, log_evidence_fail, reps_needed
from ctxprobe.analysis.sequential import levels as split_levels
from ctxprobe.sweep.adaptive import adaptive_sweep, coarse_depths, default_budget, length_state
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


def _closed_pass(n: int, reps: int) -> float:
    """The pass evidence of n = 3·reps cases all right, by hand: 0.7·U + 0.25·bar^-n + 0.05·bet."""
    uniform = (1 - BAR ** (n + 1)) / ((n + 1) * (1 - BAR) * BAR ** n)
    return 0.7 * uniform + 0.25 * BAR ** -n + 0.05 * (1 + 0.9 / BAR * (1 - BAR)) ** reps


def test_evidence_hand_computed() -> None:
    for reps in (2, 9, 10):
        assert math.exp(evidence([1.0] * reps, 3, BAR)[0]) == pytest.approx(_closed_pass(3 * reps, reps), rel=1e-10)
    # passes at alpha/2 = 0.025 (evidence 40): 27 of 27 right is 28.2, 30 of 30 is 43.2 -> 10 repetitions;
    # the fixed-size exact test needs 24 (0.856^24 <= 0.025): 1.25x
    assert _closed_pass(27, 9) < 40 < _closed_pass(30, 10)
    assert reps_needed([1.0], 3, BAR, 0.025, 0.05 / 6, 500) == 10
    # all wrong: 0.6·U- + 0.25·(1/(1-bar))^n + 0.05·(1 + 0.9·bar/(1-bar))^reps + 0.1·spread bet, whose
    # first stake comes from the pseudo-repetition (mean 1/2, spread 1/4) alone; without it, 0.7·U-
    mixture = (1 - (1 - BAR) ** 4) / (4 * BAR * (1 - BAR) ** 3)
    rest = 0.25 / (1 - BAR) ** 3 + 0.05 * (1 + 0.9 * BAR / (1 - BAR))
    assert 0.7 * mixture + rest == pytest.approx(152.5, abs=0.1)
    assert math.exp(evidence([0.0], 3, BAR, spread=False)[1]) == pytest.approx(0.7 * mixture + rest, rel=1e-10)
    stake = (BAR - 0.5) / (0.25 + (BAR - 0.5) ** 2)
    fail3 = 0.6 * mixture + rest + 0.1 * (1 + stake * BAR)
    assert math.exp(evidence([0.0], 3, BAR)[1]) == pytest.approx(fail3, rel=1e-10)
    assert fail3 == pytest.approx(142.9, abs=0.1)
    assert reps_needed([0.0], 3, BAR, 0.025, 0.05 / 6, 500) == 1  # 3 lengths: fails at 120
    assert reps_needed([0.0], 3, BAR, 0.025, 0.05 / 10, 500) == 2  # 5 lengths: fails at 200
    assert reps_needed([BAR], 3, BAR, 0.025, 0.05 / 6, 300) == 300  # at the bar: never decided, capped


def test_repetitions_with_no_spread_are_decided_by_the_bet() -> None:
    # blind in the middle: every repetition 2 of 3 right. The per-case ratios see a rate of 2/3;
    # the bet sees no spread: 0.05·(1 + 0.9·(bar - 2/3)/(1 - bar))^reps reaches 120 at 10 repetitions
    factor = 1 + 0.9 * (BAR - 2 / 3) / (1 - BAR)
    assert 0.05 * factor ** 9 < 120 < 0.05 * factor ** 10
    assert decide([2 / 3] * 10, 3, BAR, 0.025, 0.05 / 6) == "fail"
    assert decide([2 / 3] * 9, 3, BAR, 0.025, 0.05 / 6) == "open"
    # the same 20 of 30 cases spread unevenly over repetitions are not enough
    assert decide([1.0, 1 / 3] * 5, 3, BAR, 0.025, 0.05 / 6) == "open"


def test_spread_bet_hand_computed() -> None:
    # [0.6, 0.6]: the first stake from the pseudo-repetition (mean 0.5, spread 0.25); the second from
    # it and the first repetition (mean 0.55, spread (0.25 + 0.1^2) / 2 = 0.13)
    def stake(mean: float, var: float) -> float:
        return (BAR - mean) / (var + (BAR - mean) ** 2)

    bet = (1 + stake(0.5, 0.25) * (BAR - 0.6)) * (1 + stake(0.55, 0.13) * (BAR - 0.6))
    mixture = math.exp(log_evidence_fail(3.6, 6, BAR))
    fixed = (1 + 0.9 / (1 - BAR) * (BAR - 0.6)) ** 2
    assert math.exp(evidence([0.6, 0.6], 3, BAR)[1]) == pytest.approx(0.6 * mixture + 0.05 * fixed + 0.1 * bet,
                                                                      rel=1e-10)
    assert math.exp(_spread_bet([0.6, 0.6], BAR)[0]) == pytest.approx(bet, rel=1e-12)
    # with the mean so far at or above the bar it stakes nothing; its stake never passes the fixed bet's cap
    assert _spread_bet([1.0] * 3, BAR)[1] == 0.0 < _spread_bet([1.0] * 2, BAR)[1]  # 3.5 / 4 >= bar > 2.5 / 3
    assert _spread_bet([0.75] * 200, BAR)[1] == pytest.approx(0.9 / (1 - BAR))  # uncapped: about 8.5
    assert _spread_bet([0.5] * 50, BAR)[1] == pytest.approx(0.356 / (0.25 / 51 + 0.356 ** 2), rel=1e-3)


def test_spread_bet_stakes_only_on_the_past() -> None:
    # the last repetition enters through one factor, linear in it: its stake does not look at it
    past = [0.7, 1.0, 0.4, 0.7]
    logs = {x: _spread_bet(past + [x], BAR)[0] - _spread_bet(past, BAR)[0] for x in (0.0, 0.5, 1.0)}
    factors = {x: math.exp(v) for x, v in logs.items()}
    assert factors[0.5] == pytest.approx((factors[0.0] + factors[1.0]) / 2, rel=1e-12)
    assert factors[0.0] > 1 > factors[1.0]


def test_spread_bet_keeps_a_length_at_the_bar_from_failing() -> None:
    # one weak depth, the depth average exactly at the bar: the spread bet must reach 1/level in at
    # most level of the runs however long they go on (Ville); its stakes grow as the spread is seen
    rng = random.Random(7)
    profile, level, runs, reps = [1.0, 3 * BAR - 2, 1.0], 0.1, 400, 150
    failed = 0
    for _ in range(runs):
        means: list[float] = []
        for _ in range(reps):
            means.append(sum(rng.random() < p for p in profile) / 3)
            if _spread_bet(means, BAR)[0] >= math.log(1 / level):  # the new bet alone; the mixture is their average
                failed += 1
                break
    assert failed <= 55, failed  # level x runs = 40; 55 is 2.5 standard deviations above


def test_spread_bet_decides_a_weak_depth_sooner() -> None:
    # 1, 0.4, 1 (depth average 0.8): the same draws, decided in fewer repetitions with the spread bet
    rng = random.Random(3)
    draws = [sum(rng.random() < p for p in (1.0, 0.4, 1.0)) / 3 for _ in range(400)]

    def reps_to_fail(spread: bool) -> int:
        for n in range(1, len(draws) + 1):
            if evidence(draws[:n], 3, BAR, spread=spread)[1] >= math.log(1 / (0.05 / 6)):
                return n
        return len(draws) + 1

    assert reps_to_fail(True) < 0.8 * reps_to_fail(False)


def test_levels_split_alpha_between_the_first_failing_length_and_the_rest() -> None:
    assert levels(0.05, 3) == pytest.approx((0.025, 0.05 / 6))
    assert levels(0.05, 5, 1) == pytest.approx((0.0125, 0.05 / 12))


def test_decision_boundary_is_greater_or_equal() -> None:
    log_pass, _ = evidence([1.0] * 9, 3, BAR)
    level = math.exp(-log_pass)
    assert decide([1.0] * 9, 3, BAR, level * (1 + 1e-9), 1e-9) == "pass"
    assert decide([1.0] * 9, 3, BAR, level * (1 - 1e-9), 1e-9) == "open"
    assert length_state([1.0] * 9, 3, 9, 512, BAR, level * (1 + 1e-9), 1e-9).state == "pass"
    _, log_fail = evidence([0.0, 0.0], 3, BAR)
    level = math.exp(-log_fail)
    assert decide([0.0, 0.0], 3, BAR, 1e-9, level * (1 + 1e-9)) == "fail"
    assert decide([0.0, 0.0], 3, BAR, 1e-9, level * (1 - 1e-9)) == "open"
    assert length_state([], 3, 2, 512, BAR, 0.025, 0.01).state == "open"  # planned, nothing back yet
    assert length_state([], 3, 0, 512, BAR, 0.025, 0.01).state == "unsent"


def test_a_single_miss_drops_the_point_mass() -> None:
    # 29 of 30 right: the q = 1 term is gone; the uniform mixture and the bet are left
    miss = [1.0] * 9 + [2 / 3]
    assert evidence(miss, 3, BAR)[0] < math.log(0.25) - 30 * math.log(BAR)
    assert decide(miss, 3, BAR, 0.025, 0.01) == "open"


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
    # 30 of 30 right decides a pass (a fixed-size exact test: 24), 3 of 3 wrong a fail: 63 cases,
    # less than half the 6-rep grid's 90, and nothing above the failing length
    reps = {s.length: s.reps for s in result.families[0].lengths}
    assert reps == {512: 10, 1024: 10, 2048: 1} and result.cases == 63
    assert result.tokens_spent <= 30 * 512 + 30 * 1024 + 3 * 2048 and result.tokens_spent < grid_tokens / 2
    states = {s.length: s.state for s in result.families[0].lengths}
    assert states == {512: "pass", 1024: "pass", 2048: "fail"}
    # the run is an ordinary run: report reads it, the adaptive decision is on record
    report = load_report(result.run_id, store)
    assert report.profiles[0].effective_length == grid_eff
    assert report.run.meta.adaptive["decided"] is True and report.run.status == "complete"

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


LENGTHS = [512, 1024, 2048, 3072, 4096]


def _run(rates: list[float], seed: int, budget: int | None = None, source=None, **settings):
    from ctxprobe.analysis.bootstrap import ThresholdRule
    from ctxprobe.sweep.adaptive import AdaptivePlan, Settings, run_adaptive

    lengths = LENGTHS[:len(rates)]
    source = source or _Bernoulli(dict(zip(lengths, rates)), seed)
    plan = AdaptivePlan(["niah"], lengths, [0.0, 0.5, 1.0], 1)
    out = run_adaptive(plan, source, ThresholdRule("absolute", BAR), Settings(**settings),
                       budget if budget is not None else 100 * sum(lengths))
    return out, source


@pytest.mark.parametrize("rates", [
    [0.90] * 5,  # the old rule was confidently wrong in 3 of 15 seeds here
    [BAR] * 5,  # exactly at the bar (clears): a confident answer must be 4K
    [0.99, 0.98, BAR - 0.02, 0.3, 0.0],  # just below the bar at 2K: truth 1K
    [0.99, BAR + 0.05, 0.3, 0.0, 0.0],  # just above the bar at 1K: truth 1K
])
def test_confident_answers_are_rarely_wrong_at_and_near_the_bar(rates: list[float]) -> None:
    from ctxprobe.analysis.bootstrap import walk

    truth = walk(LENGTHS, rates, BAR)
    wrong = confident = 0
    seeds = 40
    for seed in range(seeds):  # a budget of 30 cases a length keeps this fast; the bound holds at any budget
        (decided, _, _, [fam], k), _ = _run(rates, seed, budget=30 * sum(LENGTHS))
        assert k == 5
        confident += decided
        wrong += decided and fam.grid_effective_length != truth
    assert wrong <= 0.05 * seeds, f"confidently wrong in {wrong} of {seeds} seeds ({confident} confident)"


def test_clear_models_are_decided_near_the_fixed_size_minimum() -> None:
    for rates, truth, cases in (([1.0] * 5, 4096, [30] * 5), ([1.0, 1.0, 0.0, 0.0, 0.0], 1024, [30, 30, 6, 0, 0]),
                                ([0.0] * 5, None, [6, 0, 0, 0, 0])):
        for seed in range(3):
            (decided, stop, _, [fam], _), source = _run(rates, seed)
            assert decided and stop == "confident" and fam.effective_length == truth
            sent = [sum(r.length == L for r in source.rows()) for L in LENGTHS]
            assert sent == cases


class _Watching(_Bernoulli):
    """Checks, at every round, what the rules allow to be sent given what is known so far."""

    def __init__(self, rates: dict[int, float], seed: int, levels_: tuple[float, float]) -> None:
        super().__init__(rates, seed)
        self.levels, self.rounds, self.totals = levels_, [], []

    def send(self, cases) -> None:
        states = {}
        for length in sorted(self.rates):
            reps: dict[int, list[float]] = {}
            for r in self.rows():
                if r.length == length:
                    reps.setdefault(r.rep, []).append(r.score)
            means = [sum(v) / len(v) for v in reps.values() if len(v) == 3]
            states[length] = decide(means, 3, BAR, *self.levels) if means else "open"
        lengths = {c.cell.length for c in cases}
        failed = [L for L, st in states.items() if st == "fail"]
        for length in lengths:
            assert states[length] == "open", f"sent to {length}, already decided {states[length]}"
            assert not failed or length < min(failed), f"sent to {length}, above the failed {min(failed)}"
            assert all(states[L] == "pass" for L in states if L < length), "sent above an undecided length"
        self.rounds.append(sorted(lengths))
        self.totals.append({L: 1 + max(c.rep for c in cases if c.cell.length == L) for L in lengths})
        super().send(cases)


@pytest.mark.parametrize("rates", [[1.0, 1.0, 0.0, 1.0, 1.0], [0.95, 0.9, 0.6, 1.0, 1.0], [BAR] * 5,
                                   [1.0, 0.0, 0.0, 0.0, 0.0]])
def test_only_the_frontier_gets_cases(rates: list[float]) -> None:
    for seed in range(3):
        watch = _Watching(dict(zip(LENGTHS, rates)), seed, split_levels(0.05, 5))
        (decided, _, _, [fam], _), _ = _run(rates, seed, budget=40 * sum(LENGTHS), source=watch)
        assert watch.rounds[0] == [512]  # the first round: the shortest length only
        assert all(len(r) == 1 for r in watch.rounds)
        by = {s.length: s for s in fam.lengths}
        if decided:
            first_fail = min((s.length for s in fam.lengths if s.state == "fail"), default=None)
            above = [s for s in fam.lengths if first_fail is not None and s.length > first_fail]
            assert all(s.state == "unsent" and s.n == 0 for s in above)
        # a 1-of-1 failing length after two perfect ones: nothing is ever sent to 3K or 4K
        if rates[2] == 0.0 and decided:
            assert by[3072].reps == by[4096].reps == 0


def test_the_frontier_grows_by_at_most_the_growth_factor() -> None:
    watch = _Watching({L: 0.95 for L in LENGTHS}, 0, split_levels(0.05, 5))
    _run([0.95] * 5, 0, source=watch, growth=1.5)
    totals = [t[512] for t in watch.totals if 512 in t]
    assert totals[0] == 1 and len(totals) >= 5
    for before, after in zip(totals, totals[1:]):
        assert before < after <= max(before + 1, math.floor(1.5 * before))


def test_at_the_bar_the_budget_is_spent_undecided() -> None:
    (decided, stop, _, [fam], _), source = _run([BAR] * 3, 1, budget=60 * sum(LENGTHS[:3]))
    spent = sum(r.token_count for r in source.rows())
    assert not decided and stop == "budget"
    assert 60 * sum(LENGTHS[:3]) - 3 * 2048 < spent <= 60 * sum(LENGTHS[:3])


def test_plan_adaptive_prints_the_expected_tokens_per_decision(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxprobe.cli import main
    from ctxprobe.sweep.adaptive_cost import adaptive_cost

    cost = adaptive_cost(_spec(lengths=[1024, 2048, 4096]), sims=50)
    assert cost.cases[1.0] == 30 and cost.cases[0.0] == 3  # deterministic at accuracies 1 and 0
    assert cost.pass_level == pytest.approx(0.025) and cost.fail_level == pytest.approx(0.05 / 6)
    assert cost.tokens(1.0, 2048) == 30 * 2048
    assert 78 < cost.cases[0.95] < 150  # a fixed-size exact test that knows the rate: 78 for 80% power
    assert main(["plan", "--adaptive", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "1k,2k,4k",
                 "--depths", "0,0.5,1"]) == 0
    out = capsys.readouterr().out
    assert "expected tokens per decision" in out and "122,880" in out  # 30 cases at 4K, accuracy 1
    assert "a perfect model: 215,040 tokens in all" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_plan_adaptive_says_undecided_where_no_amount_decides() -> None:
    from ctxprobe.sweep.adaptive_cost import adaptive_cost

    cost = adaptive_cost(_spec(lengths=[1024, 2048], threshold=1.0), sims=5)
    assert cost.decided[1.0] == 0.0 and cost.decided[0.95] == 1.0  # a bar of 1: any miss fails, nothing passes
    lines = cost.lines()
    assert "never decided at this bar" in lines[-2]
    assert lines[3].split()[1] == "undecided" and lines[3].split()[2] != "undecided"


def test_adaptive_refuses_the_noise_floor(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """The no-context twins are floors, not families: the walk would give each a budget share
    and a few cases at the first length (no floor above it), so the pair is refused up front."""
    from ctxprobe.cli import main
    from ctxprobe.sweep.adaptive_cost import adaptive_cost

    spec = _spec(model="sim:perfect", baseline="no-context")
    assert "niah@no-context" in spec.families  # what the walk would otherwise take for a family
    with pytest.raises(CtxprobeError, match="--adaptive does not take --baseline"):
        adaptive_sweep(spec, tmp_path / "unused.sqlite")
    with pytest.raises(CtxprobeError, match="--adaptive does not take --baseline"):
        adaptive_cost(spec, sims=5)
    store = tmp_path / "a.sqlite"
    code = main(["run", "--adaptive", "--model", "sim:perfect", "--lengths", "1k,2k", "--baseline", "no-context",
                 "--store", str(store), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--adaptive does not take --baseline" in err and len(err.strip().splitlines()) == 1
    assert not store.exists()  # refused before anything is sent or stored
    assert main(["plan", "--adaptive", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "1k,2k",
                 "--baseline", "no-context"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--adaptive does not take --baseline" in captured.err
    # without --adaptive the noise floor still plans
    assert main(["plan", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "1k,2k",
                 "--baseline", "no-context"]) == 0


def test_a_family_too_short_for_the_shortest_length_walks_from_one_that_holds_it(tmp_path) -> None:
    """``longout`` needs ~2.4K tokens at its default answers: in an adaptive run beside
    ``niah`` at 1K and 4K it is walked from 4K (none of its cases at 1K), niah from 1K,
    and the run is not stopped by longout's 1K length error as it once was."""
    from ctxprobe.sweep.adaptive import AdaptivePlan

    plan = AdaptivePlan(["niah", "longout"], [1024, 4096], [0.5], 1, too_short={"longout": 2391})
    assert plan.reps == {"niah": {1024: 1, 4096: 0}, "longout": {4096: 1}}
    assert AdaptivePlan(["niah", "longout"], [1024, 4096], [0.5], 1, too_short={"longout": 4096}).reps[
        "longout"] == {4096: 1}  # needs exactly the length: it fits
    assert "longout" not in AdaptivePlan(["niah", "longout"], [1024, 4096], [0.5], 1,
                                         too_short={"longout": 4097}).reps  # fits no length: not walked
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": [1024, 4096], "depths": [0.5],
                      "reps": 1, "families": {"niah": {}, "longout": {}}})
    result = adaptive_sweep(spec, tmp_path / "s.sqlite", token_budget=400_000)
    with Store(tmp_path / "s.sqlite") as s:
        sent = {(r["family"], r["length"]) for r in s.iter_case_records(result.run_id)}
    assert ("longout", 1024) not in sent and ("longout", 4096) in sent and ("niah", 1024) in sent
    assert {d.family: d.effective_length for d in result.families} == {"niah": 4096, "longout": 4096}
