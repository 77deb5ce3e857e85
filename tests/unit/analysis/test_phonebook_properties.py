"""Property tests of the phone-book metrics (both variants) on generated needle outcomes:
a perfect profile has no drop anywhere, and a known monotone decay gives the expected signs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxprobe.families.phonebook.analysis import NeedleResult, analyse
from ctxprobe.families.phonebook.analysis_post import post_metrics

M_SMALL, M_LARGE = 1000, 2000


def _needles(accuracy, runs: int, ns=(10, 100), lengths=(M_SMALL, M_LARGE)) -> list[NeedleResult]:
    """Deterministic outcomes: in bin b of (M, N), the first round(acc × runs) runs are right."""
    out = []
    for m in lengths:
        for n in ns:
            for b in range(n):
                k = round(accuracy(m, n, (b + 0.5) / n) * runs)
                for run in range(runs):
                    ok = run < k
                    out.append(NeedleResult(m, m, n, run, b, (b + 0.5) / n, f"n{m}-{n}-{b}",
                                            "correct" if ok else "wrong", ok))
    return out


def _value(an, name, variant, m):
    return an.metric(name, variant, m).value


@settings(max_examples=15, deadline=None)
@given(runs=st.integers(1, 4), ns=st.sampled_from([(10, 100), (5, 10, 100)]))
def test_perfect_profile_has_no_drop(runs: int, ns: tuple[int, ...]) -> None:
    an = analyse(_needles(lambda m, n, x: 1.0, runs, ns), bootstrap=0)
    for m in (M_SMALL, M_LARGE):
        for name in ("CSI", "ADI", "NOI"):
            assert _value(an, name, "robust", m) == 0.0
            assert _value(an, name, "post", m) == pytest.approx(0.0, abs=1e-9)
        assert _value(an, "RRS", "robust", m) == 1.0
        assert _value(an, "RRI", "post", m) == pytest.approx(1.0, abs=1e-9)
        assert _value(an, "LCRDS", "post", m) == pytest.approx(100.0, abs=1e-6)
    assert an.metric("MUC", "robust").value == M_LARGE


@settings(max_examples=25, deadline=None)
@given(level=st.floats(0.05, 1.0), per_length=st.floats(0.0, 0.5), per_position=st.floats(0.0, 0.5),
       per_needle=st.floats(0.0, 0.3))
def test_monotone_decay_gives_the_expected_signs(level, per_length, per_position, per_needle) -> None:
    """Accuracy = level × (1 − a·[M large]) × (1 − b·x) × (1 − c·[N=100]): every drop is ≥ 0,
    and strictly positive exactly where its factor is (beyond rounding to 20 runs)."""
    def acc(m, n, x):
        return level * (1 - per_length * (m == M_LARGE)) * (1 - per_position * x) * (1 - per_needle * (n == 100))

    an = analyse(_needles(acc, 20), bootstrap=0)
    for variant in ("robust", "post"):
        for m in (M_SMALL, M_LARGE):
            for name in ("CSI", "ADI", "NOI"):
                assert _value(an, name, variant, m) >= 0.0
    big = 0.2
    if per_length > big and level > 0.3:
        assert _value(an, "CSI", "robust", M_LARGE) > 0 and _value(an, "CSI", "post", M_LARGE) > 0
    if per_position > big and level > 0.3:
        assert _value(an, "ADI", "robust", M_SMALL) > 0 and _value(an, "ADI", "post", M_SMALL) > 0
    if per_needle > big and level > 0.3:
        assert _value(an, "NOI", "robust", M_SMALL) > 0 and _value(an, "NOI", "post", M_SMALL) > 0
    # the reference against itself is no drop; RRS/RRI stay within [0, 1] and below 1 when any drop is
    assert _value(an, "CSI", "robust", M_SMALL) == 0.0
    # the post's rule: against itself CSI is 0, unless the reference's fitted trough is clipped
    # to 0, where its zero-denominator rule gives 1
    acc_ref = [round(acc(M_SMALL, 100, (b + 0.5) / 100) * 20) / 20 for b in range(100)]
    trough = np.poly1d(np.polyfit(np.arange(100), acc_ref, 3))(np.linspace(0, 99, 1000)).min()
    assert _value(an, "CSI", "post", M_SMALL) == (pytest.approx(0.0, abs=1e-9) if trough > 0 else 1.0)
    for m in (M_SMALL, M_LARGE):
        assert 0.0 <= _value(an, "RRS", "robust", m) <= 1.0
        assert _value(an, "RRI", "post", m) <= 1.0 + 1e-9


@settings(max_examples=40, deadline=None)
@given(a10=st.floats(0.01, 1.0), a100=st.floats(0.0, 1.0))
def test_post_noi_of_flat_profiles_is_the_relative_drop(a10: float, a100: float) -> None:
    got = post_metrics({(1000, 10): [a10] * 10, (1000, 100): [a100] * 100}, in_entries=True)
    assert got[("NOI", 1000)].value == pytest.approx(max(a10 - a100, 0.0) / a10, abs=1e-9)
    assert got[("ADI", 1000)].value == pytest.approx(0.0, abs=1e-9) if a100 > 0 else got[("ADI", 1000)].value == 1
    assert got[("LCRDS", 1000)].value == pytest.approx(100 * a100 * got[("RRI", 1000)].value, abs=1e-9)


@settings(max_examples=20, deadline=None)
@given(values=st.lists(st.floats(0.0, 1.0), min_size=10, max_size=10))
def test_post_metrics_are_bounded(values) -> None:
    got = post_metrics({(1000, 100): list(np.repeat(values, 10)), (1000, 10): values}, in_entries=True)
    for name in ("CSI", "ADI", "NOI", "RRI"):
        assert -1e-12 <= got[(name, 1000)].value <= 1 + 1e-12
