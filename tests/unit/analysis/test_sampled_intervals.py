"""Accuracy intervals of a family whose cases were sent k times (``samples=k``).

The k samples of a case hold one prompt: their answers are correlated, so the case, not
the sample, is the independent unit. These tests check, with known truth, that the
Wilson interval over every sample under-covers and the interval clustered by case
(``analysis.sampled``, through ``analysis.grid.cell_stats``, what every reader shows)
covers; and the boundaries: k = 1 is the old numbers exactly, samples that always agree
within a case are one trial per case, samples with no spread between cases are
independent trials, and the adaptive verdict counts a case once.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from ctxprobe.analysis.adaptive_verdict import adaptive_intervals
from ctxprobe.analysis.binomial import cp_lower, cp_upper
from ctxprobe.analysis.efflength import effective_lengths
from ctxprobe.analysis.floor import floors
from ctxprobe.analysis.grid import cell_stats, length_stats, profile
from ctxprobe.analysis.clustered import design_effect
from ctxprobe.analysis.sampled import case_means, n_label, sampled_deff, sampled_families
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.case import Cell, make_case_id, sample_of_id
from ctxprobe.core.rows import ResultRow

FAMILY = "niah~t07"


def row(rep: int, right: float, sample: int | None, *, length: int = 1024, depth: float = 0.5,
        outcome: str | None = None, family: str = FAMILY) -> ResultRow:
    label = outcome or ("correct" if right >= 1 else "wrong")
    return ResultRow(family, length, depth, rep, label, None if label == "error" else float(right), 1024,
                     sample=sample)


def draw_p(rng: random.Random, mean: float, icc: float) -> float:
    """A case's success probability around ``mean`` with intra-case correlation ``icc``."""
    if icc >= 1.0:
        return 1.0 if rng.random() < mean else 0.0
    s = (1.0 - icc) / icc
    return rng.betavariate(mean * s, (1.0 - mean) * s)


def sampled_rows(rng: random.Random, n: int, k: int, mean: float, icc: float) -> list[ResultRow]:
    rows = []
    for rep in range(n):
        p = draw_p(rng, mean, icc)
        rows += [row(rep, float(rng.random() < p), s) for s in range(k)]
    return rows


def coverage(n: int, k: int, mean: float, icc: float, sims: int, seed: int) -> tuple[float, float]:
    """(Wilson over samples, clustered by case): the share of simulated cells whose 95%
    interval holds the true mean."""
    rng = random.Random(seed)
    wilson = clustered = 0
    for _ in range(sims):
        rows = sampled_rows(rng, n, k, mean, icc)
        flat = cell_stats([replace(r, sample=None) for r in rows])[0]  # the samples as independent cases
        cell = cell_stats(rows)[0]
        assert flat.cases is None and cell.cases == n and cell.mean == flat.mean
        wilson += flat.lo <= mean <= flat.hi
        clustered += cell.lo <= mean <= cell.hi
    return wilson / sims, clustered / sims


# 1,000 simulations a row: the standard error of a coverage near 0.97 is 0.005 and of one
# near 0.75 is 0.014, so each assertion holds with a margin of 4+ standard errors.
@pytest.mark.parametrize(("n", "mean", "icc"), [(10, 0.8, 0.5), (20, 0.8, 0.5), (10, 0.5, 1.0), (20, 0.5, 1.0)])
def test_wilson_on_samples_under_covers_and_the_clustered_interval_covers(n: int, mean: float, icc: float) -> None:
    wilson, clustered = coverage(n, 5, mean, icc, sims=1000, seed=n * 100 + int(icc * 10))
    assert wilson < 0.85, (wilson, clustered)  # measured 0.49-0.75 at these rows
    # measured 0.957-0.994; at ICC 1 every case is one Bernoulli trial and the interval is
    # Clopper-Pearson's over the cases (0.959 at n = 20, p = 0.5), so no tighter bound is due
    assert clustered >= 0.93, (wilson, clustered)


def test_heterogeneous_cases_widen_the_interval_and_n_says_cases_and_samples() -> None:
    rows = sampled_rows(random.Random(3), 20, 5, 0.8, 0.5)
    cell, flat = cell_stats(rows)[0], cell_stats([replace(r, sample=None) for r in rows])[0]
    assert (cell.n, cell.cases, cell.n_label, flat.n_label) == (100, 20, "20×5", "100")
    assert cell.hi - cell.lo > 1.5 * (flat.hi - flat.lo)
    assert length_stats(rows)[0].n_label == "20×5"
    assert profile(rows)[0].sampled and not profile([replace(r, sample=None) for r in rows])[0].sampled


# -- boundaries ------------------------------------------------------------------------------


def test_sent_once_and_samples_1_give_the_old_wilson_numbers_exactly() -> None:
    """k = 1: a plain run (no sample index) and a ``samples=1`` variant (ids ``…/s0``, one
    stored sample a case) are not sampled: the Wilson interval over the cases, as before."""
    once = [row(rep, float(rep % 3 != 0), None) for rep in range(12)]
    s0 = [replace(r, sample=0) for r in once]
    expected = wilson_interval(8, 12)
    for rows in (once, s0):
        assert not sampled_families(rows)
        cell, length = cell_stats(rows)[0], length_stats(rows)[0]
        assert (cell.lo, cell.hi) == expected and (length.lo, length.hi) == expected
        assert cell.cases is None and cell.n_label == "12"
    assert effective_lengths(once, draws=50) == effective_lengths(s0, draws=50)
    assert effective_lengths(once, draws=50)[0].method is None


@pytest.mark.parametrize("right", [[1, 0, 1, 1, 0, 1, 1, 1, 0, 1], [1] * 10, [0] * 10])
def test_samples_that_agree_within_every_case_are_one_trial_per_case(right: list[int]) -> None:
    """Every case's k samples the same (a model deterministic at this temperature): the
    samples add nothing, so the cell is one trial per case. The design effect is then the
    full k (its estimate nk/χ²₀.₀₅,ₙ₋₁ exceeds k, and with every case at 0 or 1 alike the
    spread cannot be seen), and the interval is the exact Clopper–Pearson interval of the
    cases (α/2 a side), and the effective-length bounds are those of the same cases sent
    once. (Not the Wilson interval a k = 1 run's table shows: a clustered interval is exact
    at its effective count, never Wilson, so it cannot be narrower at small n.)"""
    k, n = 5, len(right)
    sampled = [row(rep, r, s) for rep, r in enumerate(right) for s in range(k)]
    once = [row(rep, r, None) for rep, r in enumerate(right)]
    cell = cell_stats(sampled)[0]
    s = sum(right)
    assert cell.mean == s / n and cell.n_label == f"{n}×{k}"
    assert cell.lo == pytest.approx(cp_lower(s, n, 0.025), abs=1e-12)
    assert cell.hi == pytest.approx(cp_upper(s, n, 0.025), abs=1e-12)
    a, b = effective_lengths(sampled, threshold=0.6, draws=200)[0], effective_lengths(once, threshold=0.6, draws=200)[0]
    assert a.lower_bounds == pytest.approx(b.lower_bounds, abs=1e-12)
    assert a.upper_bounds == pytest.approx(b.upper_bounds, abs=1e-12)
    assert (a.lo, a.hi, a.point) == (b.lo, b.hi, b.point)
    assert a.p_clear == pytest.approx(b.p_clear, abs=1e-9)
    assert a.method is not None and "clustered by case" in a.method and b.method is None


def test_cases_with_no_spread_between_them_are_independent_samples() -> None:
    """Every case right on exactly 2 of its 5 samples: no case is harder than another, so
    the design effect is 1 (the clustered variance is 0, the effect never below 1) and the
    interval is the exact interval over all 50 samples — never narrower than that."""
    rows = [row(rep, float(s < 2), s) for rep in range(10) for s in range(5)]
    cell = cell_stats(rows)[0]
    assert cell.lo == pytest.approx(cp_lower(20, 50, 0.025), abs=1e-12)
    assert cell.hi == pytest.approx(cp_upper(20, 50, 0.025), abs=1e-12)
    ev = effective_lengths(rows, threshold=0.3, draws=10)[0]
    assert ev.lower_bounds[1024] == pytest.approx(cp_lower(20, 50, 0.025), abs=1e-12)


def test_harness_failures_leave_their_samples_out_and_a_case_with_none_out_of_cases() -> None:
    rows = [row(rep, 1.0, s) for rep in range(4) for s in range(5)]
    rows[0] = replace(rows[0], outcome="error", score=None)  # case 0: 4 of 5 measured
    rows[15:20] = [replace(r, outcome="error", score=None) for r in rows[15:20]]  # case 3: none
    cell = cell_stats(rows)[0]
    assert (cell.n, cell.cases, cell.n_excluded, cell.n_label) == (14, 3, 6, "3×4.7")


def test_a_sampled_family_does_not_change_its_neighbours() -> None:
    rows = sampled_rows(random.Random(1), 8, 5, 0.7, 0.5)
    plain = [row(rep, float(rep % 4 != 0), None, family="niah~t0") for rep in range(8)]
    cells = {c.family: c for c in cell_stats(rows + plain)}
    assert cells["niah~t0"] == cell_stats(plain)[0]
    assert cells[FAMILY] == cell_stats(rows)[0]


def test_the_adaptive_verdict_counts_a_case_once_at_its_samples_mean() -> None:
    """A case's k samples must not overwrite one another (the last one standing) nor count
    k times: the walk reads one score per case, the mean of its samples."""
    meta = {"adaptive": {"confidence": 0.95, "depths": [0.0, 1.0], "reps": {FAMILY: {1024: 40}},
                         "lengths_tested": 1}}
    rng = random.Random(5)
    rows = [row(rep, float(rng.random() < 0.95), s, depth=d) for rep in range(40) for d in (0.0, 1.0)
            for s in range(5)]
    means = case_means(rows)
    assert len(means) == 80 and all(r.sample is None for r in means)
    got = adaptive_intervals(rows, meta, [1024], {FAMILY: 0.5})[FAMILY]
    want = adaptive_intervals(means, meta, [1024], {FAMILY: 0.5})[FAMILY]
    assert got == want and got.states == {1024: "pass"}


def test_sample_ids_and_labels() -> None:
    cell = Cell("niah~t07", 1024, 0.5)
    assert sample_of_id(make_case_id(cell, 3, 4)) == 4
    assert sample_of_id(make_case_id(cell, 3)) is None
    assert sample_of_id(make_case_id(Cell("niah", 1024, 0.5, reasoning_budget=512), 3, 0)) == 0
    assert [n_label(12, None), n_label(100, 20), n_label(14, 3), n_label(0, 0)] == ["12", "20×5", "3×4.7", "0"]


def test_the_pseudo_case_counts_near_0_or_1_and_not_at_one_half() -> None:
    """40 cases of 5 samples, 2 samples missed in 2 different cases (accuracy 0.99): the
    spread between cases looks binomial, but a cell near 1 whose rare hard cases were not
    drawn would look exactly so; the pseudo-case at 1/2 keeps the design effect near k
    there. At a proportion of exactly 1/2 it adds nothing."""
    near_one = [(5.0 if i >= 2 else 4.0, 5) for i in range(40)]
    plain = design_effect([s for s, _ in near_one], [m for _, m in near_one])
    assert plain < 2.0 and sampled_deff(near_one) > 4.0
    half = [(float(i % 2) * 2 + 1.5, 5) for i in range(20)]  # 1.5 or 3.5 of 5: mean 1/2
    assert sum(s for s, _ in half) / 100 == 0.5
    assert sampled_deff(half) == design_effect([s for s, _ in half], [m for _, m in half])


def test_the_noise_floor_reads_a_sampled_family_at_its_effective_count() -> None:
    """``--baseline``: the accuracy's lower bound against the floor counts a sampled
    family's cases, not its samples: samples that agree within every case compare with the
    floor exactly as the same cases sent once."""
    right = [1] * 9 + [0]
    floor_rows = [row(rep, float(rep == 0), None, family=f"{FAMILY}@no-context") for rep in range(10)]
    sampled = [row(rep, r, s) for rep, r in enumerate(right) for s in range(5)]
    once = [row(rep, r, None) for rep, r in enumerate(right)]
    kinds = {FAMILY: "no-context"}
    a = floors(sampled, floor_rows, {FAMILY: 1024}, kinds)[FAMILY]
    b = floors(once, floor_rows, {FAMILY: 1024}, kinds)[FAMILY]
    (la,), (lb,) = a.lengths, b.lengths
    assert la.accuracy_lower == pytest.approx(lb.accuracy_lower, abs=1e-12)
    assert (la.floor_upper, la.above) == (lb.floor_upper, lb.above)
    flat = floors([replace(r, sample=None) for r in sampled], floor_rows, {FAMILY: 1024}, kinds)[FAMILY]
    assert flat.lengths[0].accuracy_lower > la.accuracy_lower + 0.1  # 50 samples as independent cases: far too sure
