from __future__ import annotations

import pytest

from ctxprobe.analysis.grid import (
    LengthStat,
    cell_stats,
    effective_length,
    length_stats,
    profile,
)
from ctxprobe.core.rows import ResultRow
from ctxprobe.analysis.stats import wilson_interval


def rows_for(
    family: str, length: int, depth: float, scores: list[float | None], outcome: str = ""
) -> list[ResultRow]:
    out = []
    for rep, score in enumerate(scores):
        if score is None:
            label = outcome or "error"
        else:
            label = outcome or ("correct" if score == 1 else "wrong")
        out.append(ResultRow(family, length, depth, rep, label, score))
    return out


def lengths_with_means(means: dict[int, float], n: int = 100) -> list[LengthStat]:
    """Pooled stats at given means (built through rows, so they are real stats)."""
    rows: list[ResultRow] = []
    for length, mean in means.items():
        k = round(mean * n)
        rows += rows_for("niah", length, 0.5, [1.0] * k + [0.0] * (n - k))
    return length_stats(rows)


def test_all_pass_gives_longest() -> None:
    stats = lengths_with_means({1024: 1.0, 2048: 0.95, 4096: 0.9})
    assert effective_length(stats, 0.856) == 4096


def test_stops_at_first_failure_even_if_longer_passes() -> None:
    stats = lengths_with_means({1024: 1.0, 2048: 0.5, 4096: 0.99, 8192: 0.99})
    assert effective_length(stats, 0.856) == 1024


def test_exactly_at_threshold_passes() -> None:
    stats = lengths_with_means({1024: 1.0, 2048: 0.75, 4096: 0.74})
    assert effective_length(stats, 0.75) == 2048


def test_exactly_at_default_threshold_passes() -> None:
    # 107 / 125 is 0.856 on paper; partial scores that sum to it must pass as well.
    rows = rows_for("niah", 1024, 0.5, [1.0] * 107 + [0.0] * 18)
    rows += rows_for("niah", 2048, 0.5, [0.856] * 125, outcome="partial")
    assert effective_length(length_stats(rows)) == 2048


def test_shortest_fails_gives_none() -> None:
    stats = lengths_with_means({1024: 0.5, 2048: 0.99})
    assert effective_length(stats, 0.856) is None


def test_order_of_input_does_not_matter() -> None:
    stats = lengths_with_means({1024: 1.0, 2048: 0.9, 4096: 0.1})
    assert effective_length(list(reversed(stats)), 0.856) == 2048


def test_length_with_only_harness_failures_stops_the_walk() -> None:
    rows = rows_for("niah", 1024, 0.5, [1.0] * 5)
    rows += rows_for("niah", 2048, 0.5, [None] * 5, outcome="input_truncated")
    rows += rows_for("niah", 4096, 0.5, [1.0] * 5)
    assert effective_length(length_stats(rows)) == 1024
    only_failures = rows_for("niah", 1024, 0.5, [None] * 3)
    assert effective_length(length_stats(only_failures)) is None


def test_mixed_families_rejected() -> None:
    rows = rows_for("niah", 1024, 0.5, [1.0]) + rows_for("vartrack", 1024, 0.5, [1.0])
    with pytest.raises(ValueError):
        effective_length(length_stats(rows))


def test_harness_failures_excluded_from_mean_but_counted() -> None:
    rows = rows_for("niah", 1024, 0.0, [1.0, 1.0, 0.0])
    rows += rows_for("niah", 1024, 0.0, [None], outcome="input_truncated")
    rows += rows_for("niah", 1024, 0.0, [None], outcome="error")
    (cell,) = cell_stats(rows)
    assert cell.n == 3
    assert cell.n_excluded == 2
    assert cell.mean == pytest.approx(2 / 3)
    assert (cell.lo, cell.hi) == pytest.approx(wilson_interval(2, 3))
    assert cell.outcomes == {"correct": 2, "wrong": 1, "input_truncated": 1, "error": 1}
    assert sum(cell.outcomes.values()) == cell.n + cell.n_excluded


def test_unmeasured_cell_has_no_mean() -> None:
    (cell,) = cell_stats(rows_for("niah", 1024, 0.0, [None, None]))
    assert cell.n == 0 and cell.mean is None and (cell.lo, cell.hi) == (0.0, 1.0)
    assert cell.n_excluded == 2


def test_partial_credit_averages_scores() -> None:
    rows = rows_for("niah", 1024, 0.0, [0.5, 1.0, 0.0], outcome="partial")
    (cell,) = cell_stats(rows)
    assert cell.mean == pytest.approx(0.5)
    assert (cell.lo, cell.hi) == pytest.approx(wilson_interval(1.5, 3))


def test_cells_sorted_and_lengths_pooled_over_depths() -> None:
    rows = rows_for("niah", 2048, 1.0, [0.0, 0.0])
    rows += rows_for("niah", 1024, 0.5, [1.0, 1.0])
    rows += rows_for("niah", 2048, 0.0, [1.0, 1.0])
    rows += rows_for("aggregation", 1024, 0.0, [1.0])
    cells = cell_stats(rows)
    assert [(c.family, c.length, c.depth) for c in cells] == [
        ("aggregation", 1024, 0.0),
        ("niah", 1024, 0.5),
        ("niah", 2048, 0.0),
        ("niah", 2048, 1.0),
    ]
    pooled = {(s.family, s.length): s for s in length_stats(rows)}
    assert pooled[("niah", 2048)].n == 4
    assert pooled[("niah", 2048)].mean == pytest.approx(0.5)


def test_profile_one_per_family() -> None:
    rows = rows_for("niah", 1024, 0.0, [1.0] * 4) + rows_for("niah", 2048, 0.0, [0.0] * 4)
    rows += rows_for("vartrack", 1024, 0.0, [0.0] * 4)
    profiles = profile(rows, threshold=0.9)
    assert [p.family for p in profiles] == ["niah", "vartrack"]
    niah, vartrack = profiles
    assert niah.threshold == 0.9
    assert niah.effective_length == 1024
    assert [s.length for s in niah.lengths] == [1024, 2048]
    assert all(c.family == "niah" for c in niah.cells)
    assert vartrack.effective_length is None
    assert niah.depths == [0.0]


# --- the survivors of benchmarks/mutation.py in analysis/grid.py --------------------------------

def test_walk_levels_stops_at_the_first_miss_and_never_resumes() -> None:
    from ctxprobe.analysis.grid import walk_levels

    assert walk_levels([(1, 0.9), (2, 0.86), (3, 0.95)], 0.856) == 3
    assert walk_levels([(1, 0.9), (2, 0.5), (3, 0.95)], 0.856) == 1  # 3 clears again: too late
    assert walk_levels([(1, 0.9), (2, None), (3, 0.95)], 0.856) == 1  # unmeasured stops it too
    assert walk_levels([(1, 0.5), (2, 0.95)], 0.856) is None  # the first already stops the walk
    assert walk_levels([], 0.856) is None


def test_a_profile_is_sampled_only_when_its_lengths_count_cases_and_labels_say_so() -> None:
    from ctxprobe.analysis.grid import CellStat, Profile

    once = LengthStat("niah", 1024, 20, 1.0, 0.8, 1.0)
    sampled = LengthStat("niah", 1024, 20, 1.0, 0.8, 1.0, cases=4)
    cell = CellStat("niah", 1024, 0.5, 20, 1.0, 0.8, 1.0, cases=4)
    assert not Profile("niah", 0.856, 1024, [once], []).sampled
    assert Profile("niah", 0.856, 1024, [once, sampled], []).sampled
    assert (once.n_label, sampled.n_label, cell.n_label) == ("20", "4×5", "4×5")


def test_a_group_summary_is_not_clustered_unless_asked() -> None:
    stats = length_stats(rows_for("niah", 1024, 0.5, [1.0, 0.0, 1.0]))
    assert [s.cases for s in stats] == [None]  # sent once: no cases to cluster by
