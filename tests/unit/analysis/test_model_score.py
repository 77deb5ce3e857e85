"""model_score: the one place a row's score is read for accuracy (grid, efflength, adaptive)."""

from __future__ import annotations

import pytest

from ctxprobe.analysis.grid import cell_stats, model_score
from ctxprobe.core.rows import ResultRow


def _row(outcome: str, score: float | None) -> ResultRow:
    return ResultRow("niah", 1024, 0.5, 0, outcome, score)


@pytest.mark.parametrize(("outcome", "score", "expected"), [
    ("correct", 1.0, 1.0),
    ("wrong", 0.0, 0.0),        # a miss scores 0.0: a number, not "no score"
    ("partial", 0.5, 0.5),
    ("input_truncated", 0.0, None),  # harness failures never count, whatever score they carry
    ("error", 1.0, None),
    ("wrong", None, None),      # a row that slipped through unscored is not a model miss
])
def test_model_score_keeps_model_outcomes_and_drops_harness_ones(outcome: str, score: float | None,
                                                                  expected: float | None) -> None:
    assert model_score(_row(outcome, score)) == expected


def test_cell_counts_a_zero_score_and_excludes_a_harness_failure() -> None:
    [cell] = cell_stats([_row("wrong", 0.0), _row("correct", 1.0), _row("error", None), _row("input_truncated", 0.0)])
    assert (cell.n, cell.mean, cell.n_excluded) == (2, 0.5, 2)
