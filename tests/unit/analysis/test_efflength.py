"""Effective length with guaranteed-coverage bounds (ctxprobe.analysis.efflength)."""

from __future__ import annotations

import random

import pytest
from scipy.stats import beta as scipy_beta

from ctxprobe.analysis.efflength import (
    betainc,
    cp_lower,
    cp_upper,
    effective_lengths,
)
from ctxprobe.analysis.grid import effective_length, length_stats
from ctxprobe.core.rows import ResultRow
from ctxprobe.errors import CtxprobeError

DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _rows(per_length: dict[int, list[float]], outcome: str = "x") -> list[ResultRow]:
    """Rows from {length: scores}; scores dealt round-robin over five depths."""
    return [ResultRow("niah", L, DEPTHS[i % 5], i // 5, outcome, s)
            for L, scores in per_length.items() for i, s in enumerate(scores)]


# -- the exact bounds, checked against scipy's Beta quantiles ------------------------------------


@pytest.mark.parametrize(("a", "b", "x"), [(2, 3, 0.4), (0.5, 0.5, 0.01), (17, 1, 0.86), (40.5, 3.5, 0.9),
                                           (1, 200, 0.003), (3.25, 1.75, 0.6)])
def test_betainc_matches_scipy(a: float, b: float, x: float) -> None:
    assert betainc(a, b, x) == pytest.approx(scipy_beta.cdf(x, a, b), abs=1e-12)


@pytest.mark.parametrize(("k", "n"), [(0, 5), (5, 5), (15, 15), (13, 15), (107, 125), (3, 7), (4.5, 5)])
@pytest.mark.parametrize("alpha", [0.025, 0.005])
def test_clopper_pearson_matches_scipy(k: float, n: int, alpha: float) -> None:
    lo = 0.0 if k == 0 else scipy_beta.ppf(alpha, k, n - k + 1)
    hi = 1.0 if k == n else scipy_beta.ppf(1 - alpha, k + 1, n - k)
    assert cp_lower(k, n, alpha) == pytest.approx(lo, abs=1e-10)
    assert cp_upper(k, n, alpha) == pytest.approx(hi, abs=1e-10)


def test_all_correct_hand_computed() -> None:
    # k = n: the lower bound solves p^n = alpha, so 15/15 at alpha 0.025 is 0.025^(1/15) = 0.78245
    assert cp_lower(15, 15, 0.025) == pytest.approx(0.025 ** (1 / 15), abs=1e-12)
    assert cp_lower(15, 15, 0.025) < 0.856  # 3 reps × 5 depths, all right, is NOT enough to be confident


# -- the statement follows the interval ------------------------------------------------------------


def test_three_perfect_reps_are_not_a_confident_point() -> None:
    # the example: sim:perfect, 3 reps, 1K–8K: "reliable up to 8K (8K–8K)" was an overclaim
    [iv] = effective_lengths(_rows({L: [1.0] * 15 for L in (1024, 2048, 4096, 8192)}))
    assert iv.point == 8192 and iv.lo is None and iv.hi == 8192 and not iv.exact
    assert iv.reliable_up_to is None
    assert iv.line() == "effective length 8K observed; not shown reliable even at 1K (95% confidence)"
    assert iv.interval_text() == "none shown, ≤ 8K"  # not "below 1K – 8K"
    assert all(0.5 < p < 0.8 for p in iv.p_clear.values())  # Jeffreys posterior, far from 1.00


def test_one_case_a_cell_is_at_least_at_most() -> None:
    rows = _rows({1024: [1.0] * 5, 2048: [1.0] * 5, 4096: [1.0] * 5, 8192: [0.0] * 5, 10240: [0.0] * 5})
    [iv] = effective_lengths(rows)
    assert iv.point == 4096 and iv.lo is None and iv.hi == 4096  # 0/5 is a confident fail even at n = 5
    assert iv.line() == "effective length 4K observed; not shown reliable even at 1K (95% confidence)"


def test_enough_cases_pin_it_and_say_reliable() -> None:
    rows = _rows({1024: [1.0] * 50, 2048: [1.0] * 50, 4096: [0.0] * 50})
    [iv] = effective_lengths(rows)
    assert iv.exact and iv.point == iv.lo == iv.hi == 2048 and iv.reliable_up_to == 2048
    assert iv.line() == "effective length 2K (95% confident)"


def test_lower_end_boundary_is_greater_or_equal() -> None:
    rows = _rows({1024: [1.0] * 40})
    bound = cp_lower(40, 40, 0.025)
    assert effective_lengths(rows, threshold=bound)[0].lo == 1024  # lower bound exactly at the bar: clears
    assert effective_lengths(rows, threshold=bound + 1e-9)[0].lo is None


def test_upper_end_is_corrected_across_lengths() -> None:
    # 10/20 right: the one-sided upper bound is 0.7275 at alpha/2 and 0.7857 at alpha/(2·4);
    # with four lengths, a bar between the two must leave the length undecided (not a fail)
    bar = 0.75
    assert cp_upper(10, 20, 0.025) < bar < cp_upper(10, 20, 0.05 / 8)
    scores = {L: [1.0] * 10 + [0.0] * 10 for L in (1024, 2048, 4096, 8192)}
    [iv] = effective_lengths(_rows(scores), threshold=bar)
    assert iv.point is None and iv.hi == 8192
    [one] = effective_lengths(_rows({1024: scores[1024]}), threshold=bar)  # one length: alpha/2 only
    assert one.hi is None


def test_truncated_length_is_not_measured_and_stops_every_walk() -> None:
    rows = _rows({1024: [1.0] * 50, 2048: [1.0] * 49, 4096: [1.0] * 50})
    rows.append(ResultRow("niah", 2048, 0.5, 99, "input_truncated", None))
    [iv] = effective_lengths(rows)
    assert iv.point == iv.lo == iv.hi == 1024 and iv.truncated == (2048,) and iv.not_measured == (2048,)
    assert "not measured at 2K: prompts truncated by the server" in iv.line()
    assert effective_length(length_stats(rows)) == 1024  # the grid's point walk stops there too
    # an `error` case alone is not truncation: the length is measured on the rest
    rows[-1] = ResultRow("niah", 2048, 0.5, 99, "error", None)
    assert effective_lengths(rows)[0].truncated == () and effective_length(length_stats(rows)) == 4096


def test_bad_arguments() -> None:
    with pytest.raises(CtxprobeError):
        effective_lengths([], confidence=1.0)
    with pytest.raises(CtxprobeError):
        effective_lengths([], draws=0)


# -- coverage: the interval holds the true effective length >= 95% at 1, 3 and 10 reps -----------

LENGTHS = (1024, 2048, 4096, 8192, 16384)
BAR = 0.856
MODELS = {  # per length: true P(correct) at each of the five depths
    "at the bar everywhere": [[BAR] * 5] * 5,
    "at the bar, then fails": [[0.97] * 5, [BAR] * 5, [BAR] * 5, [0.6] * 5, [0.1] * 5],
    "just below the bar at 4K": [[0.95] * 5, [0.9] * 5, [0.83] * 5, [0.5] * 5, [0.0] * 5],
    "U shape pooled at the bar": [[0.99] * 5] + [[0.95, 0.85, 0.71, 0.82, 0.95]] * 4,
}


def _truth(model: list[list[float]]) -> int:
    best = -1
    for length, rates in zip(LENGTHS, model):
        if sum(rates) / 5 < BAR - 1e-12:
            break
        best = length
    return best


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("reps", [1, 3, 10])
def test_coverage_at_least_95_percent(name: str, reps: int) -> None:
    model, rng = MODELS[name], random.Random(reps)
    key = lambda v: -1 if v is None else v  # noqa: E731
    truth, covered, sweeps = _truth(model), 0, 200
    for _ in range(sweeps):
        rows = [ResultRow("niah", L, d, r, "x", float(rng.random() < p))
                for L, rates in zip(LENGTHS, model) for d, p in zip(DEPTHS, rates) for r in range(reps)]
        [iv] = effective_lengths(rows, threshold=BAR, draws=1)
        covered += key(iv.lo) <= truth <= key(iv.hi)
    assert covered / sweeps >= 0.95, f"{name}, {reps} reps: covered {covered}/{sweeps}"


def test_books_are_stated_in_entries() -> None:
    rows = [ResultRow("phonebook", L, 0.0, r, "x", 1.0) for L in (1000, 5000) for r in range(60)]
    [iv] = effective_lengths(rows, units={"phonebook": "entries"})
    assert iv.line() == "effective length 5,000 entries (95% confident)"
