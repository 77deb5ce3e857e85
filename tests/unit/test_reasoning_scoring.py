"""Answers cut off while thinking, at the edges of the rule: a reply that spent tokens
reasoning, hit the output cap (``finish_reason="length"``) and gave no answer is
``output_truncated`` with no score (left out of accuracy); anything else is scored as
before. And the per-budget statistics, checked against counts made by hand."""

from __future__ import annotations

import pytest

from ctxprobe.analysis.reasoning import base_family, budget_family, budget_label, budget_stats, split_by_budget
from ctxprobe.analysis.grid import profile
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.core.case import Case, Cell, make_case_id
from ctxprobe.core.outcome import Outcome
from ctxprobe.core.rows import ResultRow
from ctxprobe.scores.outcome import score_response
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family

VALUE = "4819203"


@pytest.fixture(scope="module")
def niah():  # type: ignore[no-untyped-def]
    return make_family("niah", BuildContext(tokenizer=None, haystack=None))  # type: ignore[arg-type]


def case() -> Case:
    return Case(Cell("niah", 1000, 0.5, 1024), 0, 1, [{"role": "user", "content": "?"}], [VALUE],
                meta={"variant": "single"}, token_count=1000)


@pytest.mark.parametrize("text", ["", "  \n"])
def test_no_answer_after_thinking_at_the_cap_is_unscored(niah, text: str) -> None:  # type: ignore[no-untyped-def]
    score, scored = score_response(niah, case(), text=text, finish_reason="length", reported_prompt_tokens=1000,
                                   thought=True)
    assert score is None and scored.outcome == Outcome.OUTPUT_TRUNCATED and scored.detail == {"while_thinking": True}


@pytest.mark.parametrize(("text", "finish", "thought", "outcome", "score"), [
    ("48", "length", True, Outcome.OUTPUT_TRUNCATED, 0.0),  # an answer was started: cut by the answer's limit
    ("", "stop", True, Outcome.EMPTY, 0.0),  # it stopped on its own with nothing to say: the model's miss
    ("", "length", False, Outcome.OUTPUT_TRUNCATED, 0.0),  # no reasoning seen: as before the axis existed
    (VALUE, "length", True, Outcome.CORRECT, 1.0),
])
def test_everything_else_is_scored_as_before(niah, text: str, finish: str, thought: bool, outcome: str,  # type: ignore[no-untyped-def]
                                             score: float) -> None:
    got, scored = score_response(niah, case(), text=text, finish_reason=finish, reported_prompt_tokens=1000,
                                 thought=thought)
    assert (got, scored.outcome) == (score, outcome)


def test_case_id_carries_the_budget_only_when_given() -> None:
    assert make_case_id(Cell("niah", 4096, 0.5), 0) == "niah/L4096/d0.5/r0"
    assert make_case_id(Cell("niah", 4096, 0.5, 0), 0) == "niah/L4096/d0.5/r0/b0"
    assert make_case_id(Cell("niah", 4096, 0.5, 1024), 2) == "niah/L4096/d0.5/r2/b1024"


def test_labels() -> None:
    assert [budget_label(b) for b in (0, 1000, 1024, 1536, 4096)] == ["0", "1000", "1k", "1536", "4k"]
    assert budget_family("niah", 2048) == "niah@think2k" and base_family("niah@think2k") == "niah"
    assert base_family("niah") == "niah"


def row(length: int, budget: int, outcome: str, score: float | None, tokens: int | None = None) -> ResultRow:
    return ResultRow("niah", length, 0.5, 0, outcome, score, length, budget, tokens)


def test_budget_stats_by_hand() -> None:
    rows = [
        # budget 0: 3 right, 1 wrong, 1 harness error (neither answered nor scored)
        *[row(1024, 0, "correct", 1.0, 0) for _ in range(3)], row(1024, 0, "wrong", 0.0, 0),
        row(1024, 0, "error", None),
        # budget 1k: 1K all right; 2K: 2 cut off while thinking, 1 right, 1 cut by the answer limit (scored 0)
        *[row(1024, 1024, "correct", 1.0, 300) for _ in range(4)],
        row(2048, 1024, "output_truncated", None, 1072), row(2048, 1024, "output_truncated", None, 1072),
        row(2048, 1024, "correct", 1.0, 600), row(2048, 1024, "output_truncated", 0.0, 1000),
    ]
    profiles = profile(split_by_budget(rows), threshold=0.7)
    stats = {s.budget: s for s in budget_stats(rows, profiles, 0.7)}
    zero, one = stats[0], stats[1024]
    assert (zero.answered, zero.n, zero.mean, zero.cut_off) == (4, 4, 0.75, 0)
    assert (zero.lo, zero.hi) == wilson_interval(3, 4)
    assert zero.reasoning_tokens == 0 and zero.reporting == 4 and not zero.reasoning_seen
    assert zero.effective_length == 1024  # 0.75 clears 0.7
    assert (one.answered, one.n, one.cut_off) == (8, 6, 2) and one.mean == pytest.approx(5 / 6)
    assert one.cut_share == pytest.approx(2 / 8)
    assert one.reasoning_tokens == 4 * 300 + 2 * 1072 + 600 + 1000 and one.reporting == 8
    # 2K: 1 of 2 scored answers right (0.5 < 0.7): the curve stops at 1K
    assert one.effective_length == 1024
    assert {p.family for p in profiles} == {"niah@think0", "niah@think1k"}
