"""Property tests (hypothesis) of the set scorer and the effective-length walk. Each
property is stated from the documented rule and checked against an independent
implementation written here, never against the function's own output."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxprobe.analysis.grid import effective_length, length_stats
from ctxprobe.core.rows import ResultRow
from ctxprobe.scores.setscore import match_set, score_set

items = st.sampled_from([f"{n:07d}" for n in (1111111, 2222222, 3333333, 4444444, 5555555, 6666666, 7777777)])
item_sets = st.lists(items, min_size=0, max_size=6)


def f1_by_hand(expected: list[str], answered: list[str]) -> float:
    e, a = set(expected), set(answered)
    tp = len(e & a)
    if tp == 0:
        return 0.0
    p, r = tp / len(a), tp / len(e)
    return 2 * p * r / (p + r)


# --- the set scorer ------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(expected=item_sets.filter(bool), answered=item_sets, distractors=item_sets)
def test_set_score_is_f1_and_labels_follow_it(expected, answered, distractors) -> None:
    output = ", ".join(answered)
    scored = score_set(match_set(expected, answered), output, distractors)
    e, a = set(expected), set(answered)
    assert scored.score == pytest.approx(f1_by_hand(expected, answered), abs=1e-6)
    assert 0.0 <= scored.score <= 1.0
    if a == e:
        assert (scored.score, scored.outcome) == (1.0, "correct")
    elif a & e:
        assert scored.outcome == "partial" and 0.0 < scored.score < 1.0
    elif a & (set(distractors) - e):
        assert (scored.score, scored.outcome) == (0.0, "distractor")
    elif a:
        assert (scored.score, scored.outcome) == (0.0, "wrong")
    else:
        assert scored.score == 0.0 and scored.outcome == "empty"  # "" is an empty reply
    assert scored.detail["exact"] is (a == e)
    # precision of an empty answer is 0 (nothing right was said), never 1
    assert scored.detail["precision"] == pytest.approx(len(a & e) / len(a) if a else 0.0, abs=1e-6)
    assert scored.detail["recall"] == pytest.approx(len(a & e) / len(e), abs=1e-6)
    assert sorted(scored.detail["hits"]) == sorted(e & a)
    assert sorted(scored.detail["missing"]) == sorted(e - a)
    assert sorted(scored.detail["extras"]) == sorted(a - e)


@settings(max_examples=100, deadline=None)
@given(expected=item_sets.filter(bool), answered=item_sets, data=st.data())
def test_set_score_ignores_order_and_repeats(expected, answered, data) -> None:
    shuffled = data.draw(st.permutations(answered))
    repeated = answered + answered[:2]
    base = score_set(match_set(expected, answered), "x").score
    assert score_set(match_set(expected, shuffled), "x").score == base
    assert score_set(match_set(expected, repeated), "x").score == base
    assert score_set(match_set(list(reversed(expected)), answered), "x").score == base


@settings(max_examples=100, deadline=None)
@given(expected=item_sets.filter(bool), extra=item_sets)
def test_listing_everything_never_earns_full_credit(expected, extra) -> None:
    extras = [x for x in extra if x not in expected]
    everything = expected + extras
    scored = score_set(match_set(expected, everything), "x")
    if extras:
        assert scored.score < 1.0 and scored.outcome == "partial"
    else:
        assert scored.score == 1.0


# --- the effective-length walk ---------------------------------------------------------------

LENGTHS = [512, 1024, 2048, 4096, 8192, 16384]


def walk_by_hand(per_length: dict[int, tuple[int, int]], threshold: float) -> int | None:
    """RULER's rule: the longest length L such that every length up to L was measured and
    has mean >= threshold (k correct of n)."""
    best = None
    for length in sorted(per_length):
        k, n = per_length[length]
        if n == 0 or k / n < threshold - 1e-12:
            return best
        best = length
    return best


def rows_for(per_length: dict[int, tuple[int, int]], excluded: int = 0) -> list[ResultRow]:
    """k correct of n scored rows per length, plus ``excluded`` failed requests (``error``;
    at least one where n == 0: the length was run, and nothing of it measured)."""
    rows = []
    for length, (k, n) in per_length.items():
        rows += [ResultRow("niah", length, 0.5, i, "correct" if i < k else "wrong", 1.0 if i < k else 0.0)
                 for i in range(n)]
        failures = max(excluded, 1 if n == 0 else 0)
        rows += [ResultRow("niah", length, 0.5, n + i, "error", None) for i in range(failures)]
    return rows


@st.composite
def profiles(draw):
    chosen = draw(st.lists(st.sampled_from(LENGTHS), min_size=1, max_size=len(LENGTHS), unique=True))
    out = {}
    for length in chosen:
        n = draw(st.integers(min_value=0, max_value=12))
        out[length] = (draw(st.integers(min_value=0, max_value=n)), n)
    return out


thresholds = st.sampled_from([0.0, 0.25, 0.5, 0.75, 0.856, 0.9, 1.0]) | st.floats(0.0, 1.0)


@settings(max_examples=200, deadline=None)
@given(per_length=profiles(), threshold=thresholds, excluded=st.integers(0, 2))
def test_walk_matches_the_rule(per_length, threshold, excluded) -> None:
    # failed requests ("error") are left out of n; the walk goes on past them
    got = effective_length(length_stats(rows_for(per_length, excluded)), threshold)
    assert got == walk_by_hand(per_length, threshold)


@settings(max_examples=100, deadline=None)
@given(per_length=profiles(), threshold=thresholds, truncated_at=st.sampled_from(LENGTHS))
def test_a_length_with_a_truncated_prompt_stops_the_walk(per_length, threshold, truncated_at) -> None:
    # a length where the server cut any prompt was not measured as built: the walk stops there
    rows = rows_for(per_length)
    if truncated_at in per_length:
        rows.append(ResultRow("niah", truncated_at, 0.5, 99, "input_truncated", None))
    got = effective_length(length_stats(rows), threshold)
    before = {L: v for L, v in per_length.items() if L < truncated_at or truncated_at not in per_length}
    assert got == walk_by_hand(before, threshold)


@settings(max_examples=100, deadline=None)
@given(per_length=profiles(), low=thresholds, high=thresholds)
def test_a_higher_bar_never_gives_a_longer_length(per_length, low, high) -> None:
    low, high = min(low, high), max(low, high)
    stats = length_stats(rows_for(per_length))
    at_low, at_high = effective_length(stats, low), effective_length(stats, high)
    assert at_high is None or (at_low is not None and at_high <= at_low)


@settings(max_examples=100, deadline=None)
@given(per_length=profiles(), threshold=thresholds.filter(lambda t: t > 1e-9), extra=st.integers(1, 3))
def test_a_failing_longer_length_changes_nothing_below_it(per_length, threshold, extra) -> None:
    # (a bar within the comparison's 1e-12 float slack of 0 is cleared by accuracy 0)
    before = effective_length(length_stats(rows_for(per_length)), threshold)
    longer = max(per_length) * 2
    after = effective_length(length_stats(rows_for({**per_length, longer: (0, extra)})), threshold)
    assert after == before
