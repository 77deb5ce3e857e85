"""The clustered interval for phone-book recall: needles asked in one prompt share it, so
a pooled Wilson interval is too narrow. Checked against scipy (chi-square, beta) applied
independently, at its clamps (deff 1 and deff = cluster size), and by coverage of a known
truth in a seeded simulation of correlated prompts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ctxprobe.analysis.clustered import chi2_ppf, clustered_interval, design_effect
from ctxprobe.families.phonebook.analysis import NeedleResult, analyse
from ctxprobe.analysis.stats import wilson_interval


def exact(x: float, n: float) -> tuple[float, float]:
    """Two-sided 95% Clopper-Pearson with (possibly fractional) counts, straight from scipy."""
    lo = 0.0 if x <= 0 else float(stats.beta.ppf(0.025, x, n - x + 1))
    hi = 1.0 if x >= n else float(stats.beta.ppf(0.975, x + 1, n - x))
    return lo, hi


@settings(max_examples=40, deadline=None)
@given(q=st.floats(0.001, 0.999), df=st.integers(1, 60))
def test_chi2_quantile_equals_scipy(q: float, df: int) -> None:
    assert chi2_ppf(q, df) == pytest.approx(float(stats.chi2.ppf(q, df)), rel=1e-7, abs=1e-10)


def test_chi2_quantile_refuses_nonsense() -> None:
    for q, df in ((0.0, 3), (1.0, 3), (0.5, 0)):
        with pytest.raises(ValueError):
            chi2_ppf(q, df)


def test_equal_books_are_independent_trials() -> None:
    # every book 5 of 10: no spread between books, deff clamps to 1 → exact interval on 20/40
    p, lo, hi = clustered_interval([5, 5, 5, 5], [10, 10, 10, 10])
    assert p == 0.5 and design_effect([5, 5, 5, 5], [10] * 4) == 1.0
    assert (lo, hi) == pytest.approx(exact(20, 40), abs=1e-9)


def test_all_or_nothing_books_count_as_one_trial_each() -> None:
    # 3 books perfect, 1 book all wrong: needles of a book move together → 3 of 4 trials
    assert design_effect([10, 10, 0, 10], [10] * 4) == 10.0
    p, lo, hi = clustered_interval([10, 10, 0, 10], [10] * 4)
    assert p == 0.75 and (lo, hi) == pytest.approx(exact(3, 4), abs=1e-9)
    # the pooled Wilson interval would claim far more
    w = wilson_interval(30, 40)
    assert w[0] > lo + 0.2


def test_one_book_or_no_spread_at_0_or_1_is_one_trial_per_book() -> None:
    assert design_effect([7], [10]) == 10.0
    assert clustered_interval([7], [10])[1:] == pytest.approx(exact(0.7, 1), abs=1e-9)
    assert design_effect([8, 8, 8], [8, 8, 8]) == 8.0  # all perfect: the spread cannot be seen
    assert clustered_interval([8, 8, 8], [8, 8, 8])[1:] == pytest.approx(exact(3, 3), abs=1e-9)
    assert clustered_interval([], []) [1:] == (0.0, 1.0)


def test_design_effect_by_hand_between_its_clamps() -> None:
    y, m = [9, 7, 10, 6, 8], [10, 10, 10, 10, 10]
    k, n, p = 5, 50, 40 / 50
    s2 = k / (k - 1) * sum((yi - p * mi) ** 2 for yi, mi in zip(y, m)) / n**2
    want = s2 * (k - 1) / stats.chi2.ppf(0.05, k - 1) / (p * (1 - p) / n)
    assert 1 < want < 10
    assert design_effect(y, m) == pytest.approx(want, rel=1e-9)
    _, lo, hi = clustered_interval(y, m)
    assert (lo, hi) == pytest.approx(exact(p * n / want, n / want), abs=1e-9)


def test_unequal_book_sizes_and_empty_books() -> None:
    # an empty book (no needle recorded) is ignored, not counted as a cluster
    assert design_effect([4, 0, 2], [4, 0, 4]) == design_effect([4, 2], [4, 4])
    p, lo, hi = clustered_interval([4, 0, 2], [4, 0, 4])
    assert p == 0.75 and 0 <= lo < p < hi <= 1


def test_covers_a_known_rate_when_prompts_are_correlated() -> None:
    """Books whose recall varies (beta-binomial, intra-book correlation 0.3): the clustered
    interval covers the true rate about 95% of the time; a pooled Wilson interval does not."""
    rng = np.random.default_rng(20261130)
    truth, icc, books, per_book, sims = 0.8, 0.3, 10, 32, 300
    a, b = truth * (1 - icc) / icc, (1 - truth) * (1 - icc) / icc
    ours = pooled = 0
    for _ in range(sims):
        y = rng.binomial(per_book, rng.beta(a, b, books))
        _, lo, hi = clustered_interval(y.tolist(), [per_book] * books)
        ours += lo <= truth <= hi
        wlo, whi = wilson_interval(float(y.sum()), books * per_book)
        pooled += wlo <= truth <= whi
    assert ours / sims >= 0.92
    assert pooled / sims < 0.6


def test_phonebook_accuracy_is_clustered_by_book() -> None:
    """Through the analysis: 4 books of N=8 needles, books 0-2 all right, book 3 all wrong."""
    res = [NeedleResult(4096, 1000, 8, run, b, (b + 0.5) / 8, f"r{run}b{b}", "wrong" if run == 3 else "correct")
           for run in range(4) for b in range(8)]
    acc = analyse(res, bootstrap=20).accuracy[(4096, 8)]
    assert acc[0] == 0.75
    assert acc[1:] == pytest.approx(exact(3, 4), abs=1e-9)
    assert not math.isclose(acc[1], wilson_interval(24, 32)[0])
