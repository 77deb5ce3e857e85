"""What a grid can show and what would settle an open length: the effective-length verdict's
own rule asked backwards. Each count is checked at its boundary (n − 1 fails, n settles)
and against the verdict itself (a grid of that size, scored, gets the verdict promised)."""

from __future__ import annotations

import math

import pytest

from ctxprobe.analysis.binomial import cp_lower, cp_upper
from ctxprobe.analysis.efflength import LengthEvidence, effective_length_family
from ctxprobe.analysis.resolving import (best_shown, cases_to_fail, cases_to_show, max_misses, settle,
                                         shown_failing, shown_reliable)
from ctxprobe.spec.threshold import all_correct_cases, derived_reps


def _verdict(lengths: list[tuple[int, float, int]], bar: float = 0.856, depths: int = 1):
    """The effective-length interval of (length, successes, n) rows, one cell a length
    unless ``depths`` splits it evenly."""
    ev = [LengthEvidence(L, n, s, 0, tuple((s / depths, n // depths) for _ in range(depths)))
          for L, s, n in lengths]
    return effective_length_family("niah", ev, threshold=bar, confidence=0.95, draws=10)


def test_24_of_24_is_the_fewest_all_correct_cases_that_show_0856() -> None:
    """The README's "24 of 24", checked against the rule: 0.025^(1/23) = 0.8518 < 0.856 ≤ 0.025^(1/24) = 0.8575."""
    assert cases_to_show(0.856, 0.95) == 24 == all_correct_cases(0.856)
    assert not shown_reliable(23, 23, 0.856, 0.95) and shown_reliable(24, 24, 0.856, 0.95)
    assert best_shown(23, 0.95) < 0.856 <= best_shown(24, 0.95)
    assert math.isclose(best_shown(24, 0.95), 0.025 ** (1 / 24), rel_tol=1e-9)
    # and the verdict agrees: 23 all correct is "not shown", 24 is "reliable up to"
    assert _verdict([(1024, 23, 23)]).reliable_up_to is None
    assert _verdict([(1024, 24, 24)]).reliable_up_to == 1024


@pytest.mark.parametrize("bar", [0.5, 0.7, 0.8, 0.856, 0.9, 0.95, 0.99])
def test_the_spec_default_and_the_analysis_rule_agree(bar: float) -> None:
    """spec/ derives the default reps by the closed form (n of n: alpha^(1/n)); analysis/
    searches the bounds. Both are the verdict's rule: one count, at its boundary."""
    n = cases_to_show(bar, 0.95)
    assert n == all_correct_cases(bar)
    assert n is not None and shown_reliable(n, n, bar, 0.95) and not shown_reliable(n - 1, n - 1, bar, 0.95)
    assert derived_reps([bar], 5) == math.ceil(n / 5)


def test_a_bar_on_a_grids_boundary_is_shown_exactly_there() -> None:
    """A bar placed exactly at what 24 all-correct cases show: 24 clears it (the slack of
    equality), 23 does not; one hair above it needs 25."""
    edge = cp_lower(24, 24, 0.025)
    assert cases_to_show(edge, 0.95) == 24 == all_correct_cases(edge)
    assert cases_to_show(edge + 1e-9, 0.95) == 25 == all_correct_cases(edge + 1e-9)


def test_misses_a_grid_can_afford() -> None:
    assert max_misses(23, 0.856, 0.95) is None  # even all correct cannot
    assert max_misses(24, 0.856, 0.95) == 0
    m = max_misses(60, 0.856, 0.95)
    assert m is not None and shown_reliable(60 - m, 60, 0.856, 0.95) and not shown_reliable(59 - m, 60, 0.856, 0.95)


def test_cases_to_show_at_a_rate_below_one() -> None:
    """At 0.95 observed: the fewest n whose lower bound at 0.95·n successes clears; n − 1 does not."""
    n = cases_to_show(0.856, 0.95, 0.95)
    assert n is not None and n > 24
    assert shown_reliable(0.95 * n, n, 0.856, 0.95) and not shown_reliable(0.95 * (n - 1), n - 1, 0.856, 0.95)
    assert cases_to_show(0.856, 0.95, 0.856) is None  # on the bar: never
    assert cases_to_show(0.856, 0.95, 0.5) is None  # below it: never shown reliable


def test_cases_to_fail_uses_the_upper_bound_at_alpha_over_2k() -> None:
    n = cases_to_fail(0.856, 0.95, 2, 0.5)
    assert n is not None
    assert cp_upper(0.5 * n, n, 0.05 / 4) < 0.856 <= cp_upper(0.5 * (n - 1), n - 1, 0.05 / 4)
    # more lengths, a stricter level: never fewer cases
    more = cases_to_fail(0.856, 0.95, 8, 0.5)
    assert more is not None and more >= n
    assert shown_failing(0, 4, 0.856, 0.95, 2) and cases_to_fail(0.856, 0.95, 2, 0.0) <= 4
    assert cases_to_fail(0.856, 0.95, 2, 0.9) is None  # above the bar: never shown failing


def test_an_open_length_says_what_settles_it_and_the_verdict_keeps_the_promise() -> None:
    """8 of 8 at 1K (one depth): open; settled by 24 of 24 (--reps 24, 3x the cases) — and a
    length of 24 of 24 is then reliable. 3 of 8 at 2K is past the walk's upper end: not listed."""
    iv = _verdict([(1024, 8, 8), (2048, 3, 8)])
    assert iv.reliable_up_to is None and set(iv.settle) == {1024}
    s = iv.settle[1024]
    assert (s.side, s.cases, s.reps) == ("reliable", 24, 24)
    assert s.line() == ("1K: 8 of 8 correct cannot show an accuracy ≥ 0.856 with 95% confidence: "
                        "at this rate that takes 24 of 24 (`--reps 24` here, 3× the cases)")
    assert iv.to_dict()["settle"]["1024"]["reps"] == 24  # the JSON carries it
    assert _verdict([(1024, s.cases, s.cases)]).reliable_up_to == 1024


def test_reps_count_the_depths_a_repetition_holds() -> None:
    iv = _verdict([(1024, 10, 10)], depths=5)  # 5 depths x 2 reps, all correct
    s = iv.settle[1024]
    assert (s.cases, s.per_rep, s.reps) == (24, 5, 5)
    assert "`--reps 5` here, 2.5× the cases" in s.line()


def test_a_failing_rate_is_settled_as_failing() -> None:
    iv = _verdict([(1024, 6, 10), (2048, 0, 10)])  # 0.6 at 1K: open; 2K not reached
    s = iv.settle[1024]
    assert s.side == "fails" and s.cases is not None
    assert shown_failing(0.6 * s.cases, s.cases, 0.856, 0.95, 2)
    assert not shown_failing(0.6 * (s.cases - 1), s.cases - 1, 0.856, 0.95, 2)
    assert "does not yet show it fails the bar 0.856" in s.line()


def test_settled_lengths_and_the_bar_itself() -> None:
    assert settle(1024, 24, 24, threshold=0.856, confidence=0.95, lengths=1, per_rep=1) is None  # reliable
    assert settle(1024, 0, 24, threshold=0.856, confidence=0.95, lengths=1, per_rep=1) is None  # fails
    on_bar = settle(1024, 107, 125, threshold=0.856, confidence=0.95, lengths=1, per_rep=5)  # 107/125 = 0.856
    assert on_bar is not None and on_bar.cases is None and "sits on the bar" in on_bar.line()


def test_a_large_count_is_written_with_thousands_separators() -> None:
    # 17 of 20 (0.85) just under the bar: tens of thousands of cases, written as every count is
    s = settle(1024, 17, 20, threshold=0.856, confidence=0.95, lengths=3, per_rep=5)
    assert s is not None and s.cases is not None and s.cases >= 10_000
    assert f"takes {s.cases:,} cases (`--reps {s.reps}` here" in s.line()


def test_the_grid_power_line_leaves_out_a_family_not_scored_per_case() -> None:
    """The phone book's accuracy is recall per needle (its class says ``per_case_accuracy``
    False), so "what the grid can show" counts its cases for no one; a family scored per
    case beside it, sized in tokens as the phone book here is, keeps its line."""
    from ctxprobe.analysis.resolving import grid_power
    from ctxprobe.spec import make_spec

    spec = make_spec({"model": "sim:perfect", "lengths": [1024], "depths": [0.0, 1.0], "reps": 4,
                      "families": {"niah": {}, "phonebook": {"unit": "tokens", "needles": [4]}}})
    lines = grid_power(spec)
    assert lines and any("niah" in line for line in lines)
    assert not any("phonebook" in line for line in lines)


def test_the_answer_names_the_fewest_reps_that_settle_an_open_length_first() -> None:
    """17 of 20 at 1K (0.85, just under the bar) needs thousands of repetitions; 20 of 20 at
    2K needs 24 cases, 5 reps of 5 depths: the answer names both, the 5 first, each the count
    its settle line gives (it once named only 1K's)."""
    from ctxprobe.analysis.resolving import reps_clause
    from ctxprobe.report.terminal import answer_line

    iv = _verdict([(1024, 17, 20), (2048, 20, 20)], depths=5)
    near, clear = iv.settle[1024], iv.settle[2048]
    assert clear.reps == 5 and near.reps is not None and near.reps > 1000
    assert f"`--reps {near.reps}` here" in near.line() and "`--reps 5` here" in clear.line()
    assert answer_line(iv) == ("not shown reliable at any tested length (95% confidence); `--reps 5` would settle 2K, "
                               f"`--reps {near.reps}` 1K, at the rates observed")
    # equal counts share a clause; one length is "the rate"; none settles one on the bar
    assert reps_clause([("niah 2K", clear), ("multihop 2K", clear)]) == ("`--reps 5` would settle niah 2K and "
                                                                      "multihop 2K at the rates observed")
    assert reps_clause([("2K", clear)]) == "`--reps 5` would settle 2K at the rate observed"
    on_bar = settle(1024, 107, 125, threshold=0.856, confidence=0.95, lengths=1, per_rep=5)
    assert on_bar is not None
    assert reps_clause([("2K", clear), ("1K", on_bar)]) == ("`--reps 5` would settle 2K at the rates observed; no practical number "
                                            "of cases settles 1K at the rates observed")
    assert reps_clause([]) == ""


def test_the_grid_power_line_leaves_out_a_family_sent_at_no_length() -> None:
    """A family too short to build at every length (``too_short`` above the longest) is sent
    at none, so "can show" has nothing to say of it; one that fits the longest length (need
    exactly 2048, the boundary) keeps its line."""
    from ctxprobe.analysis.resolving import grid_power
    from ctxprobe.spec import make_spec

    base = {"model": "sim:perfect", "lengths": [1024, 2048], "depths": [0.5], "reps": 24,
            "families": {"niah": {}, "longout": {}}}
    none_fits = make_spec(base).model_copy(update={"too_short": {"longout": 2049}})
    assert [line for line in grid_power(none_fits) if "longout" in line] == []
    assert any("niah" in line for line in grid_power(none_fits))
    edge = make_spec(base).model_copy(update={"too_short": {"longout": 2048}})
    assert any("longout" in line for line in grid_power(edge))
