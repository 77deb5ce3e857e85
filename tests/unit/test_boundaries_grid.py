"""Boundaries of the grid statistics: the default bar one case either side, what counts as
a harness failure, and the order outcome counts are reported in."""

from __future__ import annotations

import pytest

from ctxprobe.analysis.grid import cell_stats, effective_length, is_harness_failure, length_stats, profile
from ctxprobe.core.rows import ResultRow
from ctxprobe.core.outcome import OUTCOMES


def _rows(length: int, correct: int, n: int) -> list[ResultRow]:
    return [ResultRow("niah", length, 0.5, i, "correct" if i < correct else "wrong", 1.0 if i < correct else 0.0)
            for i in range(n)]


@pytest.mark.parametrize(("correct", "passes"), [(107, True), (106, False)])
def test_default_bar_is_rulers_0856_one_case_either_side(correct: int, passes: bool) -> None:
    # 107/125 = 0.856 exactly; 106/125 = 0.848
    rows = _rows(1024, 125, 125) + _rows(2048, correct, 125)
    assert effective_length(length_stats(rows)) == (2048 if passes else 1024)
    assert profile(rows)[0].threshold == 0.856


def test_a_bar_just_above_a_mean_fails_it() -> None:
    rows = _rows(1024, 3, 4)  # 0.75
    assert effective_length(length_stats(rows), 0.75) == 1024
    assert effective_length(length_stats(rows), 0.75 + 1e-9) is None


def test_the_float_slack_of_the_bar_is_1e12_inclusive() -> None:
    # "mean >= threshold up to float rounding": a bar 1e-12 above the mean still passes
    # (0.75 + 1e-12 - 1e-12 == 0.75 exactly in binary64), 2e-12 above does not
    rows = _rows(1024, 3, 4)  # 0.75
    assert (0.75 + 1e-12) - 1e-12 == 0.75
    assert effective_length(length_stats(rows), 0.75 + 1e-12) == 1024
    assert effective_length(length_stats(rows), 0.75 + 2e-12) is None


@pytest.mark.parametrize(
    ("outcome", "score", "harness"),
    [
        ("input_truncated", None, True),
        ("error", None, True),
        ("error", 0.0, True),  # a harness label excludes the row even if a score slipped in
        ("wrong", None, True),  # an unscored row is never a model miss
        ("wrong", 0.0, False),
        ("output_truncated", 0.0, False),  # the model ran out of budget: its miss
        ("correct", 1.0, False),
    ],
)
def test_what_counts_as_a_harness_failure(outcome: str, score: float | None, harness: bool) -> None:
    row = ResultRow("niah", 1024, 0.0, 0, outcome, score)
    assert is_harness_failure(row) is harness
    (cell,) = cell_stats([row, ResultRow("niah", 1024, 0.0, 1, "correct", 1.0)])
    assert (cell.n, cell.n_excluded) == ((1, 1) if harness else (2, 0))


def test_outcome_counts_follow_the_taxonomy_order_then_unknown_labels_alphabetically() -> None:
    labels = ["zeta", "error", "wrong", "alpha", "correct", "partial", "input_truncated", "wrong"]
    rows = [ResultRow("niah", 1024, 0.0, i, o, None if o in ("error", "input_truncated") else 0.0)
            for i, o in enumerate(labels)]
    (cell,) = cell_stats(rows)
    known = [o for o in OUTCOMES if o in labels]
    assert list(cell.outcomes) == known + ["alpha", "zeta"]
    assert cell.outcomes["wrong"] == 2
    (pooled,) = length_stats(rows)
    assert list(pooled.outcomes) == list(cell.outcomes)


def test_wilson_clamps_sums_that_overshoot_by_rounding() -> None:
    """A sum of fractional scores can land ulps outside [0, n]: the interval is the one of
    the boundary itself, exactly (0 or 1 is reached, nothing is NaN)."""
    from ctxprobe.analysis.stats import wilson_interval

    for n in (1, 7, 125):
        assert wilson_interval(-1e-12, n) == wilson_interval(0, n)
        assert wilson_interval(n + 1e-12, n) == wilson_interval(n, n)
        assert wilson_interval(-1e-12, n)[0] == 0.0 and wilson_interval(n + 1e-12, n)[1] == 1.0


def test_wilson_bounds_stay_in_the_unit_interval_near_its_edges() -> None:
    """Computed bounds can round past 0 or 1 by ulps near the edges (found by search:
    1e-16 of 1 success gives a raw lower bound of -5.6e-17; 7 - 1e-12 of 7 a raw upper
    bound of 1 + 2.2e-16); the interval must still lie in [0, 1]."""
    from ctxprobe.analysis.stats import wilson_interval

    for successes, n in [(1e-16, 1), (8.904445039371489e-09, 5), (7 - 1e-12, 7), (7 - 1e-9, 7)]:
        lo, hi = wilson_interval(successes, n)
        assert 0.0 <= lo <= successes / n <= hi <= 1.0, (successes, n, lo, hi)


def test_profiles_of_several_families_keep_each_familys_own_stats() -> None:
    """Rows read back from a store carry their own (equal, not identical) family strings."""
    import json

    rows = [ResultRow(json.loads(f'"{fam}"'), length, depth, rep, "correct", 1.0)
            for fam in ("aggregation", "niah", "vartrack") for length in (1024, 2048) for depth in (0.0, 1.0)
            for rep in range(2)]
    profiles = profile(rows)
    assert [p.family for p in profiles] == ["aggregation", "niah", "vartrack"]
    for p in profiles:
        assert {c.family for c in p.cells} == {p.family} and len(p.cells) == 4
        assert {s.family for s in p.lengths} == {p.family} and [s.length for s in p.lengths] == [1024, 2048]
        assert all(c.n == 2 for c in p.cells) and all(s.n == 4 for s in p.lengths)


def test_measured_needs_a_scored_case_and_no_truncated_prompt() -> None:
    from ctxprobe.analysis.grid import LengthStat, measured

    assert not measured(LengthStat("niah", 1024, 0, None, 0.0, 1.0, {"error": 3}, 3))
    assert measured(LengthStat("niah", 1024, 1, 0.0, 0.0, 0.8, {"wrong": 1}))
    assert not measured(LengthStat("niah", 1024, 5, 1.0, 0.5, 1.0, {"correct": 5, "input_truncated": 1}, 1))


def test_effective_length_of_nothing_is_none() -> None:
    assert effective_length([]) is None


def test_stats_are_immutable_and_exclude_nothing_by_default() -> None:
    import dataclasses

    from ctxprobe.analysis.grid import CellStat, LengthStat

    cell = CellStat("niah", 1024, 0.5, 2, 1.0, 0.3, 1.0)
    length = LengthStat("niah", 1024, 2, 1.0, 0.3, 1.0)
    assert cell.n_excluded == 0 and length.n_excluded == 0
    prof = profile(_rows(1024, 1, 1))[0]
    for obj, attr in ((cell, "mean"), (length, "mean"), (prof, "effective_length")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, None)
