"""Property tests (hypothesis) of the Wilson interval: scipy's for any k of n, inside
[0, 1] around the estimate, exact at the boundaries, increasing in the successes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxprobe.analysis.stats import wilson_interval


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 2_000), data=st.data())
def test_wilson_matches_scipy_and_brackets_the_estimate(n, data) -> None:
    from scipy.stats import binomtest

    k = data.draw(st.integers(0, n))
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-9) and hi == pytest.approx(ref.high, abs=1e-9)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert (lo == 0.0) is (k == 0) and (hi == 1.0) is (k == n)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 500), data=st.data())
def test_wilson_grows_with_successes(n, data) -> None:
    k = data.draw(st.integers(0, n - 1))
    lo_a, hi_a = wilson_interval(k, n)
    lo_b, hi_b = wilson_interval(k + 0.5, n)
    lo_c, hi_c = wilson_interval(k + 1, n)
    assert lo_a < lo_b < lo_c and hi_a < hi_b < hi_c
    assert not math.isnan(lo_b) and not math.isnan(hi_b)
