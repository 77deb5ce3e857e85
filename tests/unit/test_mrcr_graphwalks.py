"""mrcr and graphwalks: exact budgets with the real local tokenizer, the asked instance
and the answer re-derived independently from the prompt text, sims that read the prompt
recover known truths, strict outcomes."""

from __future__ import annotations

import asyncio
import re

import pytest

from ctxprobe.core.case import Case, Cell
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.models.base import GenerateRequest
from ctxprobe.sim.model import SimModel
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

DEPTHS = (0.0, 0.5, 1.0)


@pytest.fixture(scope="module")
def tok():
    return resolve_tokenizer("local")


@pytest.fixture(scope="module")
def mrcr_cases(tok):
    fam = make_family("mrcr", BuildContext(tokenizer=tok, haystack=None))
    params = validate_params("mrcr", {"needles": 4, "reply_words": 60})
    return fam, {(L, d): fam.generate(Cell("mrcr", L, d), 0, seed=7, params=params)
                 for L in (1024, 3000) for d in DEPTHS}


@pytest.fixture(scope="module")
def gw_cases(tok):
    fam = make_family("graphwalks", BuildContext(tokenizer=tok, haystack=None))
    out = {}
    for problem in ("bfs", "parents"):
        params = validate_params("graphwalks", {"problem": problem})
        for L in (1024, 3000):
            for d in DEPTHS:
                out[(problem, L, d)] = fam.generate(Cell("graphwalks", L, d), 0, seed=7, params=params)
    return fam, out


def _sim(kind: str, tok, case: Case) -> str:
    sim = SimModel(kind, tok)
    res = asyncio.run(sim.generate(GenerateRequest(messages=case.messages, max_tokens=case.max_tokens or 4096)))
    return res.text


def test_mrcr_exact_budget_over_all_messages(tok, mrcr_cases) -> None:
    _, cases = mrcr_cases
    for (length, _), case in cases.items():
        n = len(tok.encode_chat(case.messages))
        assert n == case.token_count and length - fill_tolerance(length) < n <= length
        assert len(case.messages) > 8 and case.messages[-1]["role"] == "user"
        assert [m["role"] for m in case.messages[:-1]] == ["user", "assistant"] * ((len(case.messages) - 1) // 2)


def test_mrcr_question_names_the_instance_at_the_cell_depth(mrcr_cases) -> None:
    _, cases = mrcr_cases
    for (_length, depth), case in cases.items():
        q = case.messages[-1]["content"]
        m = re.fullmatch(r"Prepend (\w{10}) to the (\d)(st|nd|rd|th) \(1 indexed\) (.+) about (.+)\. "
                         r"Do not include any other text in your response\.", q)
        assert m, q
        prefix, n, fmt, topic = m.group(1), int(m.group(2)), m.group(4), m.group(5)
        request = f"write {'an' if fmt[0] in 'aeiou' else 'a'} {fmt} about {topic}"
        asks = [i for i, msg in enumerate(case.messages[:-1]) if msg["role"] == "user" and msg["content"] == request]
        assert len(asks) == 4  # the needles
        assert case.expected == [prefix + case.messages[asks[n - 1] + 1]["content"]]
        # depth 0: the first turn of all; depth 1: the last; 0.5 in between
        turn = asks[n - 1] // 2
        turns = (len(case.messages) - 1) // 2
        if depth == 0.0:
            assert turn == 0 and n == 1
        elif depth == 1.0:
            assert turn == turns - 1 and n == 4
        else:
            assert 0.3 < case.realised_depth < 0.7 and 0 < turn < turns - 1
        others = [msg["content"] for msg in case.messages[:-1] if msg["role"] == "user" and msg["content"] != request]
        assert all(re.fullmatch(r"write an? .+ about .+", o) for o in others)


def test_mrcr_same_turns_at_every_depth(mrcr_cases) -> None:
    _, cases = mrcr_cases
    for length in (1024, 3000):
        sets = [sorted(m["content"] for m in cases[(length, d)].messages[:-1]) for d in DEPTHS]
        assert sets[0] == sets[1] == sets[2]


def test_mrcr_perfect_sim_recovers_the_answer(tok, mrcr_cases) -> None:
    fam, cases = mrcr_cases
    for case in cases.values():
        s = fam.score(case, _sim("perfect", tok, case))
        assert s.outcome == "correct" and s.score == 1.0 and s.detail["last_occurrence"] == 1.0


def test_mrcr_blind_middle_misses_mid_context(tok, mrcr_cases) -> None:
    fam, cases = mrcr_cases
    for length in (1024, 3000):
        assert fam.score(cases[(length, 0.0)], _sim("blind-middle", tok, cases[(length, 0.0)])).score == 1.0
        mid = fam.score(cases[(length, 0.5)], _sim("blind-middle", tok, cases[(length, 0.5)]))
        assert mid.outcome != "correct" and mid.score < 1.0


def test_mrcr_outcomes(mrcr_cases) -> None:
    fam, cases = mrcr_cases
    case = cases[(3000, 0.5)]
    prefix = case.meta["random_string_to_prepend"]
    answer = case.expected[0]
    other = case.distractors[0]
    assert fam.score(case, prefix + other).outcome == "distractor"
    assert fam.score(case, other).outcome == "distractor"  # another instance, even without the string
    cut = fam.score(case, answer[: len(answer) // 2])
    assert cut.outcome == "partial" and 0 < cut.score < 1
    assert fam.score(case, answer[1:]).score == 0.0  # the string off by one character
    assert fam.score(case, "").outcome == "empty"
    v2 = fam.score(case, "Here you go: " + answer)
    assert v2.score == 0.0 and v2.detail["last_occurrence"] == 1.0


def _edges(prompt: str) -> list[tuple[str, str]]:
    body = prompt.split("Here is the graph to operate on:", 1)[1]
    return re.findall(r"^([0-9a-f]{10}) -> ([0-9a-f]{10})$", body, re.MULTILINE)


def _truth(case: Case) -> list[str]:
    prompt = case.messages[0]["content"]
    edges = _edges(prompt)
    parents = re.search(r"Find the parents of node ([0-9a-f]{10})\.", prompt)
    if parents:
        return sorted({a for a, b in edges if b == parents.group(1)})
    m = re.search(r"Perform a BFS from node ([0-9a-f]{10}) with depth (\d)\.\n", prompt.rsplit("Operation:", 1)[1])
    assert m
    start, depth = m.group(1), int(m.group(2))
    level, seen = {start}, {start}
    for _ in range(depth):
        level = {b for a, b in edges if a in level} - seen
        seen |= level
    return sorted(level)


def test_graphwalks_exact_budget_and_answers_from_the_prompt(tok, gw_cases) -> None:
    _, cases = gw_cases
    for (_problem, length, _), case in cases.items():
        n = len(tok.encode_chat(case.messages))
        assert n == case.token_count and length - fill_tolerance(length) < n <= length
        assert sorted(case.expected) == _truth(case) and len(case.expected) >= 2
        edges = _edges(case.messages[0]["content"])
        assert len(edges) == len(set(edges)) == case.meta["edges"]
        nodes = {x for e in edges for x in e}
        assert len(nodes) == case.meta["nodes"]  # every node has degree >= 1


def test_graphwalks_same_graph_at_every_depth(gw_cases) -> None:
    _, cases = gw_cases
    for problem in ("bfs", "parents"):
        for length in (1024, 3000):
            graphs = [sorted(_edges(cases[(problem, length, d)].messages[0]["content"])) for d in DEPTHS]
            assert graphs[0] == graphs[1] == graphs[2]


def test_graphwalks_sims(tok, gw_cases) -> None:
    fam, cases = gw_cases
    for case in cases.values():
        assert fam.score(case, _sim("perfect", tok, case)).score == 1.0
    # long enough that the edge list, not the instruction, fills most of the context
    params = validate_params("graphwalks", {"problem": "parents"})
    for rep in range(2):
        at = {d: fam.generate(Cell("graphwalks", 6000, d), rep, seed=7, params=params) for d in DEPTHS}
        scores = {d: fam.score(c, _sim("blind-middle", tok, c)).score for d, c in at.items()}
        assert scores == {0.0: 1.0, 0.5: 0.0, 1.0: 1.0}


def test_graphwalks_outcomes(gw_cases) -> None:
    fam, cases = gw_cases
    case = cases[("bfs", 3000, 0.5)]
    gold = case.expected
    assert fam.score(case, "Final Answer: [" + ", ".join(gold[:1]) + "]").outcome == "partial"
    assert fam.score(case, "Final Answer: [" + gold[0] + "0]").score == 0.0  # inside a longer id
    assert fam.score(case, "the answer is " + ", ".join(gold)).outcome == "parse_error"
    assert fam.score(case, "Final Answer: []").outcome == "not_found"
