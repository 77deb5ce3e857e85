"""RULER preset: every mapped task is a valid ctxprobe family config; RULER's scorers."""

from __future__ import annotations

import pytest

from ctxprobe.tasks import FAMILIES, Cell, validate_params
from ctxprobe.tasks.case import Case
from ctxprobe.tasks.ruler import (
    STRING_MATCH_ALL,
    STRING_MATCH_PART,
    ruler_families,
    ruler_score,
    string_match_all,
    string_match_all_batch,
    string_match_part,
    string_match_part_batch,
)

RULER_TASKS = {"niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
               "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe", "qa_1", "qa_2"}


def test_all_thirteen_tasks_map_to_valid_params(tmp_path) -> None:
    tasks = ruler_families(docs=str(tmp_path), qa_squad="squad.jsonl", qa_hotpot="hotpot.jsonl")
    assert set(tasks) == RULER_TASKS
    for name, t in tasks.items():
        assert t["family"] in FAMILIES, name
        validate_params(t["family"], t["params"])  # raises on a parameter the family does not know
        assert t["metric"] == (STRING_MATCH_PART if name.startswith("qa") else STRING_MATCH_ALL)


def test_qa_tasks_need_user_data() -> None:
    tasks = ruler_families()
    assert tasks["qa_1"]["family"] is None and tasks["qa_2"]["family"] is None
    assert tasks["vt"]["params"] == {"hops": 4, "chains": 1}


def test_string_match_scorers() -> None:
    assert string_match_all("The numbers are 123 and 456.", ["123", "456", "789"]) == pytest.approx(2 / 3)
    assert string_match_part("Answer: PARIS\x00", ["paris", "france"]) == 1.0
    assert string_match_part("London", ["paris"]) == 0.0
    assert string_match_all_batch(["a b", "c"], [["a", "b"], ["d"]]) == 50.0
    assert string_match_part_batch(["a b", "c"], [["x", "b"], ["d"]]) == 50.0


def test_ruler_score_uses_expected_and_aliases() -> None:
    case = Case(cell=Cell("documents", 512, 0.5), rep=0, seed=0, messages=[], expected=["Kelvor-Dane"],
                meta={"aliases": ["Kelvor Dane"]})
    assert ruler_score(case, "it is kelvor dane", STRING_MATCH_PART) == 1.0
    assert ruler_score(case, "it is kelvor dane", STRING_MATCH_ALL) == 0.5
