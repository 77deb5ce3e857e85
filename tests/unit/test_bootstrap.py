"""Threshold rules and the effective-length walk (ctxprobe.analysis.bootstrap), and Wilson."""

from __future__ import annotations

from statistics import NormalDist

import pytest
from scipy.stats import binomtest

from ctxprobe.analysis.bootstrap import ThresholdRule, first_scored, walk
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.errors import CtxprobeError


# -- Wilson at the levels the adaptive sweep uses --------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(0, 5), (5, 5), (17, 17), (16, 20), (107, 125), (3, 7)])
@pytest.mark.parametrize("confidence", [0.90, 0.95, 0.99])
def test_wilson_at_any_level_matches_scipy(k: int, n: int, confidence: float) -> None:
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    ref = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    lo, hi = wilson_interval(k, n, z)
    assert lo == pytest.approx(ref.low, abs=1e-9)
    assert hi == pytest.approx(ref.high, abs=1e-9)


def test_wilson_hand_computed_all_correct() -> None:
    # k = n: lower bound = n / (n + z²); z = 1.6448536 (one-sided 95%), z² = 2.7055435:
    # 17 / 19.7055435 = 0.8627014
    lo, hi = wilson_interval(17, 17, NormalDist().inv_cdf(0.95))
    assert lo == pytest.approx(0.8627014, abs=1e-7) and hi == 1.0


# -- threshold rules and the boundary ---------------------------------------------------------


def test_rules_resolve_and_parse() -> None:
    assert ThresholdRule().resolve(0.2) == 0.856
    assert ThresholdRule.relative().resolve(0.9) == pytest.approx(0.765)
    assert ThresholdRule.relative().resolve(0.0) is None  # nothing to degrade from
    assert ThresholdRule.relative().resolve(None) is None
    assert ThresholdRule.parse("0.9") == ThresholdRule("absolute", 0.9)
    assert ThresholdRule.parse("relative") == ThresholdRule("relative", 0.85)
    assert ThresholdRule.parse("relative:0.8") == ThresholdRule("relative", 0.8)
    for bad in ("abc", "relative:x", "1.5"):
        with pytest.raises(CtxprobeError):
            ThresholdRule.parse(bad)


def test_clears_means_greater_or_equal_absolute() -> None:
    # 107/125 is 0.856 exactly on paper: it clears; 106/125 does not.
    lengths, means = [512, 1024, 2048], [1.0, 107 / 125, 106 / 125]
    assert walk(lengths, means, ThresholdRule().resolve(first_scored(means))) == 1024
    assert walk([1, 2], [0.856, 0.8559999], 0.856) == 1


def test_clears_means_greater_or_equal_relative() -> None:
    # base 1.0 at the shortest length, fraction 0.8: 4/5 = 0.8 clears, 0.79 does not
    lengths, means = [512, 1024, 2048], [1.0, 4 / 5, 0.79]
    bar = ThresholdRule.relative(0.8).resolve(first_scored(means))
    assert bar == pytest.approx(0.8)
    assert walk(lengths, means, bar) == 1024


def test_walk_stops_at_an_unscored_length_and_without_a_bar() -> None:
    # a length with no scored case (None) stops the walk, even if longer ones clear
    assert walk([512, 1024, 2048], [1.0, None, 1.0], 0.5) == 512
    assert walk([512, 1024], [0.2, 1.0], 0.5) is None  # fails at the shortest length
    assert first_scored([None, 0.4, 0.9]) == 0.4
    # a relative rule with nothing to degrade from gives no bar, hence no effective length
    assert walk([512, 1024], [0.0, 0.0], ThresholdRule.relative().resolve(0.0)) is None
