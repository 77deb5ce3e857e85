"""Phone-book metrics on hand-built needle results whose accuracies are known exactly: a
drop must have the right direction (NOI: fewer needles asked → more right) and a relative
metric must be relative. Expected values follow the module's documented formulas,
computed here independently (numpy's polyfit stands in for the post's fit)."""

from __future__ import annotations

import pytest

from ctxprobe.families.phonebook.analysis import NeedleResult, analyse

LENGTH, RUNS = 4096, 4


def needles(n: int, correct_by_bin: list[int]) -> list[NeedleResult]:
    """``correct_by_bin[b]`` of the RUNS runs answer bin b right."""
    out = []
    for b, k in enumerate(correct_by_bin):
        for run in range(RUNS):
            out.append(NeedleResult(LENGTH, 1000, n, run, b, (b + 0.5) / n, f"n{n}b{b}r{run}",
                                    "correct" if run < k else "wrong"))
    return out


# N = 5 asked: 18 of 20 right (0.9). N = 10 asked: bins 0-4 half right, bins 5-9 a quarter
# (15 of 40 = 0.375): asking more needles costs accuracy, and the curve's peak is well below 1.
FEW = [4, 4, 4, 3, 3]
MANY = [2, 2, 2, 2, 2, 1, 1, 1, 1, 1]


@pytest.fixture(scope="module")
def analysis():
    return analyse(needles(5, FEW) + needles(10, MANY), bootstrap=0)


def test_robust_noi_is_the_drop_from_few_needles_to_many(analysis) -> None:
    few, many = sum(FEW) / (5 * RUNS), sum(MANY) / (10 * RUNS)
    assert (few, many) == (0.9, 0.375)
    assert analysis.metric("NOI", "robust", LENGTH).value == pytest.approx(few - many)


def test_robust_noi_is_zero_when_more_needles_do_no_harm() -> None:
    an = analyse(needles(5, [2, 2, 2, 2, 2]) + needles(10, [4] * 10), bootstrap=0)
    assert an.metric("NOI", "robust", LENGTH).value == 0.0  # an improvement is no drop
