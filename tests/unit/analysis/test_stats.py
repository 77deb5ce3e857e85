from __future__ import annotations

import pytest
from scipy.stats import binomtest

from ctxprobe.analysis.stats import wilson_interval


@pytest.mark.parametrize(
    ("k", "n"),
    [(0, 1), (1, 1), (0, 10), (10, 10), (5, 10), (8, 10), (1, 3), (43, 50), (107, 125), (1, 1000)],
)
def test_matches_scipy_reference(k: int, n: int) -> None:
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


def test_hand_computed_five_of_ten() -> None:
    # z = 1.959964, z² = 3.841459; p = 0.5 so the centre is exactly 0.5, and
    # half = z·sqrt(0.25/10 + z²/400) / (1 + z²/10)
    #      = 1.959964 · sqrt(0.025 + 0.0096036) / 1.3841459
    #      = 1.959964 · 0.1860206 / 1.3841459 = 0.3645936 / 1.3841459 = 0.2634069
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.5 - 0.2634069, abs=1e-6)
    assert hi == pytest.approx(0.5 + 0.2634069, abs=1e-6)


def test_boundaries_are_exact() -> None:
    assert wilson_interval(0, 7)[0] == 0.0
    assert wilson_interval(7, 7)[1] == 1.0


def test_empty_is_whole_range() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_fractional_successes_sit_between_neighbours() -> None:
    lo_a, hi_a = wilson_interval(4, 10)
    lo_b, hi_b = wilson_interval(4.5, 10)
    lo_c, hi_c = wilson_interval(5, 10)
    assert lo_a < lo_b < lo_c
    assert hi_a < hi_b < hi_c


def test_interval_contains_estimate_and_shrinks_with_n() -> None:
    lo_small, hi_small = wilson_interval(8, 10)
    lo_big, hi_big = wilson_interval(80, 100)
    assert lo_small < 0.8 < hi_small
    assert hi_big - lo_big < hi_small - lo_small


def test_negative_n_rejected() -> None:
    with pytest.raises(ValueError):
        wilson_interval(0, -1)
