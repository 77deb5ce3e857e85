"""Phone-book bootstrap intervals: the share of undefined resamples is stated, MUC "none" is
a value (not a dropped draw), and a point on the edge of its interval is explained."""

from __future__ import annotations

import pytest

from ctxprobe.families.phonebook.analysis import NeedleResult, analyse


def _case(m: int, n: int, run: int, right) -> list[NeedleResult]:
    return [NeedleResult(m, m, n, run, b, (b + 0.5) / n, f"r{run}-{n}-{b}", "correct" if right(b) else "wrong",
                         right(b)) for b in range(n)]


def test_undefined_resamples_are_counted_not_hidden() -> None:
    # run 1's N=10 case failed (a harness failure leaves it out): a resample of run 1 alone
    # has no N=10 at all, so NOI is undefined there -- about a quarter of resamples of 2 runs
    results = (_case(1000, 10, 0, lambda b: True) + _case(1000, 100, 0, lambda b: b < 50)
               + _case(1000, 100, 1, lambda b: b < 60))
    an = analyse(results, bootstrap=2000, seed=3)
    for variant in ("robust", "post"):
        noi = an.metric("NOI", variant, 1000)
        assert noi.value is not None and noi.undefined == pytest.approx(0.25, abs=0.04), variant
        assert an.metric("ADI", variant, 1000).undefined == 0.0


def test_muc_none_is_a_value_in_its_interval() -> None:
    # half the runs fail the 0.8 bar everywhere, half pass: MUC is sometimes none
    results = []
    for run in range(6):
        for m in (1000, 2000):
            results += _case(m, 10, run, lambda b, ok=run % 2 == 0: ok)
    an = analyse(results, bootstrap=500)
    muc = an.metric("MUC", "robust")
    assert muc.value is None and muc.undefined == 0.0
    assert muc.lo == 0.0 and muc.hi == 2000  # 0 = none: no length qualified in that resample


def test_point_on_the_edge_is_explained() -> None:
    results = []
    for run in range(5):
        results += _case(1000, 100, run, lambda b: True)
        results += _case(2000, 100, run, lambda b, r=run: r != 0 or b % 2 == 0)  # one run loses half
    an = analyse(results, bootstrap=500)
    csi = an.metric("CSI", "robust", 2000)
    assert csi.value == pytest.approx(0.1) and csi.note is None  # inside its interval
    ref = an.metric("CSI", "robust", 1000)
    assert ref.value == 0.0 and ref.lo == ref.hi == 0.0 and ref.note is None
    adi = an.metric("ADI", "robust", 1000)
    assert adi.value == 0.0 and adi.hi == 0.0 and adi.note is None


def test_point_clipped_at_zero_on_the_edge_of_its_interval_says_so() -> None:
    # M=2000 is as good as M=1000 on average (one run better, one worse): CSI is 0, clipped,
    # while resamples that drop the better run show a drop
    results = []
    for run in range(5):
        results += _case(1000, 100, run, lambda b: b < 90)
        cut = {0: 100, 1: 80}.get(run, 90)
        results += _case(2000, 100, run, lambda b, c=cut: b < c)
    an = analyse(results, bootstrap=500)
    csi = an.metric("CSI", "robust", 2000)
    assert csi.value == 0.0 and csi.lo == 0.0 and csi.hi > 0.0
    assert csi.note is not None and "edge of its interval" in csi.note and "resamples equal it" in csi.note


def test_nothing_recalled_is_not_called_resilient() -> None:
    results = [r for run in range(3) for m in (1000, 2000) for n in (10, 100) for r in _case(m, n, run, lambda b: False)]
    an = analyse(results, bootstrap=50)
    rrs = an.metric("RRS", "robust", 2000)
    assert rrs.value == 1.0 and "nothing was recalled" in (rrs.note or "")
    assert an.metric("LCRDS", "robust", 2000).value == 0.0
    # the post's zero-denominator rule makes every drop 1: RRI 0
    assert an.metric("RRI", "post", 2000).value == 0.0 and an.metric("LCRDS", "post", 2000).value == 0.0
