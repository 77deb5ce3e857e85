"""A bootstrap resample can draw none of the books that hold a length (that length's cases
exist only in some runs): every bin is then unmeasured. The analysis decides that case
itself — the length is not cleared, the walk stops there — instead of asking numpy for the
minimum of an all-NaN slice (which warns "All-NaN slice encountered")."""

from __future__ import annotations

import warnings

import numpy as np

from ctxprobe.families.phonebook.analysis import NeedleResult, _clears_every_bin, analyse


def _book(m: int, n: int, run: int, right) -> list[NeedleResult]:
    return [NeedleResult(m, m, n, run, b, (b + 0.5) / n, f"r{run}-{m}-{b}", "correct" if right(b) else "wrong",
                         right(b)) for b in range(n)]


def test_an_unmeasured_length_is_not_cleared() -> None:
    nan = float("nan")
    assert not _clears_every_bin(np.array([nan, nan, nan]), 0.8)  # nothing measured
    assert _clears_every_bin(np.array([nan, 0.8, 0.9]), 0.8)  # measured bins at the bar
    assert not _clears_every_bin(np.array([nan, 0.79, 0.9]), 0.8)
    assert not _clears_every_bin(np.array([]), 0.8)


def test_resamples_without_a_length_raise_no_warning_and_stop_the_walk() -> None:
    # runs 0-1 hold 1000 and 2000; runs 2-5 hold 1000 only (their 2000 books failed): a
    # resample of runs 2-5 alone (a chance of (4/6)^6, about 9%) has no 2000 at all
    results = []
    for run in range(6):
        results += _book(1000, 10, run, lambda b: True)
        if run < 2:
            results += _book(2000, 10, run, lambda b: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning (All-NaN slice, mean of empty) fails
        an = analyse(results, bootstrap=400, seed=1)
    muc = an.metric("MUC", "robust")
    assert muc.value == 2000  # every book recalled everything
    # resamples that drew no 2000 book stop at 1000: the lower end of MUC's interval
    assert muc.lo == 1000 and muc.hi == 2000
