"""``nolima``: NoLiMa's needle-set layout expanded as its run_tests.py expands it, placed by
ctxprobe's packer, scored by NoLiMa's _evaluate_response (checked against an independent
re-implementation written from its description)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.core.case import Cell
from ctxprobe.families.nolima.task_meta import NolimaMeta
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.families.nolima.task import DEFAULT_TASK_TEMPLATE, distractor_depth, expand, nolima_score
from ctxprobe.tokenizers import resolve_tokenizer

ENTRY = {  # NoLiMa's layout (invented content)
    "id": "0401", "reasoning_type": "world_knowledge", "system_prompt": "You are a careful reader.",
    "needle": "Actually, {CHAR} lives next to the {1}.",
    "questions": {"onehop": "Which character has been to {2}?", "twohop": "Which character has been to {3} {2}?"},
    "character_set": ["Yuki", "Stuart", "Katie"],
    "distractors": {"onehop": "There was an article about {2} in the paper.", "twohop": "Nothing about {3}."},
    "tests": {"T01": {"input_args": ["Lanternfold Bridge", "Quilport", "the old town of"]}},
}
PLAIN = {"id": "0500", "system_prompt": "", "needle": "The vault code is {1}.",
         "questions": {"direct": "What is the vault code?"}, "tests": {"T01": {"input_args": ["8812"], "gold_answers": ["8812"]}}}


def _set(tmp_path: Path, entries: list[dict]) -> str:
    p = tmp_path / "needle_set.json"
    p.write_text(json.dumps(entries))
    return str(p)


def test_expansion_follows_run_tests() -> None:
    tests = expand([ENTRY, PLAIN])
    assert [t.name for t in tests] == ["0401_T01_onehop", "0401_T01_twohop", "0500_T01_direct"]
    assert tests[0].needle == "Actually, {CHAR} lives next to the Lanternfold Bridge."
    assert tests[0].question == "Which character has been to Quilport?"
    # each replacement restarts from the template: only the last placeholder found ({3}) is filled
    assert tests[1].question == "Which character has been to the old town of {2}?"
    assert tests[0].distractor == "There was an article about Quilport in the paper."
    assert tests[0].task_template == DEFAULT_TASK_TEMPLATE and tests[2].gold_answers == ("8812",)


def _theirs(response: str, gold: list[str], metric: str) -> int:
    last = response.strip().split("\n")[-1]
    return {"EM": int(response.strip() in gold), "contains": int(any(g in response for g in gold)),
            "lastline_EM": int(last in gold), "lastline_contains": int(any(g in last for g in gold))}[metric]


@pytest.mark.parametrize("metric", ["contains", "EM", "lastline_EM", "lastline_contains"])
def test_metrics_match_an_independent_reimplementation(metric: str) -> None:
    for response in ["Yuki", " Yuki \n", "It is Yuki.", "yuki", "Yuki\nno", "I think\nYuki", "", "Stuart or Yuki"]:
        assert nolima_score(response, ["Yuki"], metric) == _theirs(response, ["Yuki"], metric), (response, metric)


def test_distractor_depth_keeps_out_of_the_free_zone() -> None:
    import random

    rng = random.Random(0)
    for depth in (0.0, 0.3, 0.5, 0.9, 1.0):
        for _ in range(50):
            d = distractor_depth(depth, 4096, rng)
            assert abs(d - depth) >= 0.2 - 1e-9  # never within the free zone around the needle
    assert distractor_depth(0.5, 400, rng) == 0.7 and distractor_depth(0.8, 400, rng) == 0.6
    assert distractor_depth(0.7, 400, rng) == 0.5


def test_cases_are_built_to_length_with_nolima_prompts(tmp_path: Path) -> None:
    fam = make_family("nolima", BuildContext(resolve_tokenizer("local"), None))
    params = validate_params("nolima", {"needle_set": _set(tmp_path, [ENTRY, PLAIN])})
    case = fam.generate(Cell("nolima", 1024, 0.5), 0, seed=1, params=params)
    assert 0 <= 1024 - case.token_count <= fill_tolerance(1024)
    system, user = case.messages
    assert system == {"role": "system", "content": "You are a helpful assistant"}
    char = case.expected[0]
    assert char in ENTRY["character_set"] and f"Actually, {char} lives next to the Lanternfold Bridge." in user["content"]
    assert user["content"].startswith("You will answer a question based on the following book snippet:\n\n")
    assert "Question: Which character has been to Quilport?" in user["content"]
    assert "There was an article about Quilport in the paper." in user["content"]
    assert fam.score(case, f"{char}").score == 1.0 and fam.score(case, "Nobody").score == 0.0
    meta = json.loads(json.dumps(case.meta))
    hints = NolimaMeta.__required_keys__
    assert hints <= meta.keys()
    plain = fam.generate(Cell("nolima", 1024, 0.5), 2, seed=1, params=validate_params(
        "nolima", {"needle_set": _set(tmp_path, [ENTRY, PLAIN]), "system_prompt": "none"}))
    assert plain.expected == ["8812"] and [m["role"] for m in plain.messages] == ["user"]


def test_a_bad_needle_set_is_one_line(tmp_path: Path) -> None:
    fam = make_family("nolima", BuildContext(resolve_tokenizer("local"), None))
    bad = {**ENTRY}
    del bad["character_set"]
    for entries, message in (([{"id": "1"}], "lacks needle, questions, tests"), ([bad], "no character_set")):
        path = tmp_path / f"{len(message)}.json"
        path.write_text(json.dumps(entries))
        with pytest.raises(CtxprobeError, match=message):
            fam.generate(Cell("nolima", 1024, 0.5), 0, seed=1, params=validate_params("nolima", {"needle_set": str(path)}))
