"""The published scoring rules, re-implemented here from the original code (the openai/mrcr
and openai/graphwalks dataset cards, google-deepmind/eval_hub mrcr_v2, lm-evaluation-harness
tasks/graphwalks, NeMo-Skills evaluator/graphwalks.py), equal ours to 1e-9; boundaries."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

import pytest

from ctxprobe.scores.originals import graphwalks_parse, mrcr_v2_grade, openai_mrcr_grade, set_f1


# --- independent references (written from the sources, not calling ctxprobe) ---------------

def ref_openai_grade(response, answer, random_string_to_prepend) -> float:
    if not response.startswith(random_string_to_prepend):
        return 0
    response = response.removeprefix(random_string_to_prepend)
    answer = answer.removeprefix(random_string_to_prepend)
    return float(SequenceMatcher(None, response, answer).ratio())


def ref_v2(prediction, target, n=12) -> float:
    if not isinstance(prediction, str) or not prediction:
        return 0.0
    target = target.strip()
    if len(target) < n:
        return 0.0
    h, ref = target[:n], target[n:].strip()
    prediction = prediction.strip()
    i = prediction.rfind(h)
    if i == -1:
        return 0.0
    return SequenceMatcher(a=ref, b=prediction[i + n:].strip()).ratio()


def ref_card_get_list(response):
    line = response.split("\n")[-1]
    if "Final Answer:" not in line:
        return [], True
    list_part = re.search(r"Final Answer: ?\[.*\]", line)
    if list_part:
        result_list = list_part.group(0).strip("[]").split(",")
        return [item.strip() for item in result_list if item.strip()], False
    return [], True


def ref_lmeval_list(response):
    line = response.rstrip("\n").split("\n")[-1]
    if "Final Answer:" not in line:
        return [], True
    match = re.search(r"Final Answer:\s*\[(.*)\]", line)
    if match:
        content = match.group(1)
        if not content.strip():
            return [], False
        return [i.strip().strip("'\"") for i in content.split(",") if i.strip()], False
    return [], True


def ref_nemo_list(response):
    lines = [ln for ln in response.strip().split("\n") if ln.strip()]
    if not lines:
        return [], True
    match = re.search(r"Final Answer:\s*\[(.*)\]", lines[-1])
    if match:
        content = match.group(1)
        if not content.strip():
            return [], False
        return [i.strip() for i in content.split(",") if i.strip()], False
    return [], True


def ref_f1_lmeval(pred, gold):
    s, t = set(pred), set(gold)
    o = len(s & t)
    r = o / len(t) if t else 0.0
    p = o / len(s) if s else 0.0
    return 2 * r * p / (r + p) if r + p > 0 else 0.0


def ref_f1_nemo(pred, gold):
    s, t = set(pred), set(gold)
    if not t and not s:
        return 1.0
    if not s or not t:
        return 0.0
    tp = len(s & t)
    p, r = tp / len(s), tp / len(t)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


PREFIX = "aYooSG8CQg"
POEM = "On Tapirs\n\nA tapir walks the river bank,\nits nose a question in the reeds.\n\nThe water keeps its counsel."
RESPONSES = [
    PREFIX + POEM, PREFIX + POEM[:-10], PREFIX + " " + POEM, " " + PREFIX + POEM, POEM, "", PREFIX,
    PREFIX + POEM + "\n" + PREFIX + POEM, "Sure! " + PREFIX + POEM, PREFIX + POEM.upper(), PREFIX[:-1] + POEM,
    PREFIX + "x" * 300 + POEM, PREFIX + POEM * 3,
]


@pytest.mark.parametrize("response", RESPONSES)
def test_mrcr_rules_equal_the_originals(response: str) -> None:
    answer = PREFIX + POEM
    assert abs(openai_mrcr_grade(response, answer, PREFIX) - ref_openai_grade(response, answer, PREFIX)) < 1e-9
    assert abs(mrcr_v2_grade(response, answer, len(PREFIX)) - ref_v2(response, answer, len(PREFIX))) < 1e-9
    twelve = "Ab3dEf6hIj9k"
    assert abs(mrcr_v2_grade(response.replace(PREFIX, twelve), twelve + POEM)
               - ref_v2(response.replace(PREFIX, twelve), twelve + POEM)) < 1e-9


def test_mrcr_prefix_boundaries() -> None:
    answer = PREFIX + POEM
    assert openai_mrcr_grade(PREFIX + POEM, answer, PREFIX) == 1.0
    assert openai_mrcr_grade(PREFIX[:-1] + POEM, answer, PREFIX) == 0.0  # one char short of the string
    assert openai_mrcr_grade(PREFIX[1:] + POEM, answer, PREFIX) == 0.0
    assert openai_mrcr_grade(" " + PREFIX + POEM, answer, PREFIX) == 0.0  # OpenAI does not strip
    assert mrcr_v2_grade(" " + PREFIX + POEM, answer, len(PREFIX)) == 1.0  # v2 strips
    # v2 reads after the last occurrence: a preamble naming the string costs nothing
    assert mrcr_v2_grade(f"I will prepend {PREFIX}.\n{PREFIX}{POEM}", answer, len(PREFIX)) == 1.0
    assert openai_mrcr_grade(f"I will prepend {PREFIX}.\n{PREFIX}{POEM}", answer, PREFIX) == 0.0
    # the string repeated at the end leaves nothing after the last occurrence
    assert mrcr_v2_grade(PREFIX + POEM + PREFIX, answer, len(PREFIX)) == 0.0
    # the ratio is not symmetric once autojunk applies (200+ chars): order matches the source
    long_resp, long_ans = PREFIX + "ab" * 150 + "c", PREFIX + "a" * 300
    fwd = SequenceMatcher(None, "ab" * 150 + "c", "a" * 300).ratio()
    assert openai_mrcr_grade(long_resp, long_ans, PREFIX) == pytest.approx(fwd, abs=1e-12)


LINES = [
    "Final Answer: [abc0000001, abc0000002, abc0000003]",
    "reasoning...\nFinal Answer: [abc0000001, abc0000002]",
    "Final Answer: [abc0000001, abc0000002]\n",
    "Final Answer: [abc0000001, abc0000002]\n\n",
    "Final Answer: []",
    "Final Answer:[abc0000001]",
    "final answer: [abc0000001]",
    "Final Answer: ['abc0000001', \"abc0000002\"]",
    "Final Answer: abc0000001",
    "Final Answer: [abc0000001, abc0000001, abc00000012]",
    "Final Answer: [abc0000001]\nThat is all.",
    "",
    "Final Answer: [ , abc0000002, ]",
]
GOLDS = [["abc0000001", "abc0000002"], ["abc0000001"], [], ["abc0000003", "abc0000002", "abc0000001"]]


@pytest.mark.parametrize("line", LINES)
def test_graphwalks_parsing_and_f1_equal_the_originals(line: str) -> None:
    for style, ref in (("card", ref_card_get_list), ("lm-eval", ref_lmeval_list), ("nemo", ref_nemo_list)):
        assert graphwalks_parse(line, style) == ref(line), style
        pred, _ = ref(line)
        for gold in GOLDS:
            assert abs(set_f1(pred, gold, "zero") - ref_f1_lmeval(pred, gold)) < 1e-9
            assert abs(set_f1(pred, gold, "one") - ref_f1_nemo(pred, gold)) < 1e-9


def test_graphwalks_boundaries() -> None:
    # the card keeps "Final Answer: [" on the first item, so the first node never matches
    assert graphwalks_parse("Final Answer: [a1, b2]", "card") == (["Final Answer: [a1", "b2"], False)
    assert graphwalks_parse("Final Answer: [a1, b2]", "lm-eval") == (["a1", "b2"], False)
    # a trailing newline empties the card's last line; lm-eval strips it first
    assert graphwalks_parse("Final Answer: [a1]\n", "card") == ([], True)
    assert graphwalks_parse("Final Answer: [a1]\n", "lm-eval") == (["a1"], False)
    # a value inside a longer id is not the value
    assert set_f1(["abc00000012"], ["abc0000001"]) == 0.0
    # empty gold both ways
    assert set_f1([], [], "zero") == 0.0 and set_f1([], [], "one") == 1.0
    assert set_f1(["a"], [], "zero") == 0.0 and set_f1(["a"], [], "one") == 0.0
    assert set_f1(["a", "a", "b"], ["a", "b"]) == 1.0  # a set: repeats count once
