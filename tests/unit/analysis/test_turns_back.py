"""Accuracy by turns back pooled into ranges and read as a reach (docs/layouts.md): the
ranges' edges, the Wilson interval of each range, and the walk out from the last message
that stops at the first distance below the bar."""

from __future__ import annotations

import pytest

from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.analysis.turns_back import TurnsBackStat, bin_of, turns_back_bins, turns_back_reach


@pytest.mark.parametrize("back, edges", [(0, (0, 0)), (1, (1, 1)), (2, (2, 2)), (3, (3, 4)), (4, (3, 4)),
                                         (5, (5, 8)), (8, (5, 8)), (9, (9, 16)), (16, (9, 16)), (17, (17, 32)),
                                         (1000, (513, 1024)), (1025, (1025, 2048))])
def test_each_distance_falls_in_one_range(back: int, edges: tuple[int, int]) -> None:
    assert bin_of(back) == edges


def test_ranges_are_contiguous_and_do_not_overlap() -> None:
    seen = [bin_of(b) for b in range(0, 300)]
    ranges = sorted(set(seen))
    assert ranges[0] == (0, 0) and all(lo == prev_hi + 1 for (_, prev_hi), (lo, _) in zip(ranges, ranges[1:]))


def test_bins_pool_cases_and_carry_their_interval() -> None:
    stats = [TurnsBackStat("niah", 5, 2, 1.0), TurnsBackStat("niah", 7, 3, 0.0), TurnsBackStat("niah", 9, 4, 0.5),
             TurnsBackStat("niah~chat", 5, 1, 1.0)]
    bins = turns_back_bins(stats)
    assert [(b.family, b.label, b.n) for b in bins] == [("niah", "5-8", 5), ("niah", "9-16", 4), ("niah~chat", "5-8", 1)]
    assert bins[0].mean == pytest.approx(2 / 5) and (bins[0].ci_lo, bins[0].ci_hi) == wilson_interval(2, 5)
    assert bins[1].mean == 0.5 and bins[2].mean == 1.0


def _stats(means: dict[int, float]) -> list[TurnsBackStat]:
    return [TurnsBackStat("niah", b, 3, m) for b, m in means.items()]


def test_reach_stops_at_the_first_distance_below_the_bar() -> None:
    (r,) = turns_back_reach(_stats({0: 1.0, 2: 1.0, 4: 0.9, 6: 0.8, 8: 1.0}), {"niah": 0.856})
    assert (r.reach, r.first_below, r.furthest) == (4, 6, 8)  # 8 clears again: the walk has stopped
    assert "up to 4 messages back; below it 6 back (furthest measured 8)" in r.line()


def test_reach_at_the_bar_itself_clears() -> None:
    (r,) = turns_back_reach(_stats({0: 1.0, 3: 0.856, 5: 0.855}), {"niah": 0.856})
    assert (r.reach, r.first_below) == (3, 5)


def test_reach_when_all_or_none_clear() -> None:
    (every,) = turns_back_reach(_stats({1: 1.0, 3: 1.0}), {"niah": 0.5})
    assert (every.reach, every.first_below) == (3, None) and "every distance measured, up to 3" in every.line()
    (none,) = turns_back_reach(_stats({1: 0.0, 3: 1.0}), {"niah": 0.5})
    assert (none.reach, none.first_below) == (None, 1) and "already 1 message back" in none.line()


def test_reach_only_for_labels_with_a_bar() -> None:
    assert turns_back_reach(_stats({0: 1.0}), {"other": 0.5}) == []
