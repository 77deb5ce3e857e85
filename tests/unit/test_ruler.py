"""RULER preset: the 13 tasks' mapping, RULER's scorers, and RULER's rendering re-derived
independently from the original's rules (NVIDIA/RULER ``scripts/data/synthetic/*.py``)."""

from __future__ import annotations

import math
import random
import re
from collections import Counter

import pytest

from ctxprobe.core.case import Cell, Case
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import family_names, make_family, validate_params
from ctxprobe.families.ruler.task import (
    STRING_MATCH_ALL,
    STRING_MATCH_PART,
    ruler_families,
    ruler_score,
    skipped_line,
    string_match_all,
    string_match_all_batch,
    string_match_part,
    string_match_part_batch,
)
from ctxprobe.families.ruler.task.family import fit
from ctxprobe.families.ruler.task.render import Rendered
from ctxprobe.tokenizers import resolve_tokenizer

RULER_TASKS = {"niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
               "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe", "qa_1", "qa_2"}
# The original's texts, typed here from NVIDIA/RULER (not imported from ctxprobe).
NOISE = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
TTG = {"niah": 128, "vt": 30, "cwe": 120, "fwe": 50}


@pytest.fixture(scope="module")
def tok():
    return resolve_tokenizer("local")


@pytest.fixture(scope="module")
def family(tok):
    return make_family("ruler", BuildContext(tok, None))


def build(family, task: str, length: int = 4096, depth: float = 0.5, rep: int = 0) -> Case:
    return family.generate(Cell(task, length, depth), rep, seed=7, params=validate_params("ruler", {"task": task}))


def test_all_thirteen_tasks_map_to_valid_params(tmp_path) -> None:
    tasks = ruler_families(docs=str(tmp_path), qa_squad="squad.jsonl", qa_hotpot="hotpot.jsonl")
    assert set(tasks) == RULER_TASKS
    for name, t in tasks.items():
        assert t["family"] in family_names(), name
        validate_params(t["family"], t["params"])  # raises on a parameter the family does not know
        assert t["metric"] == (STRING_MATCH_PART if name.startswith("qa") else STRING_MATCH_ALL)
    assert {n for n, t in tasks.items() if t["family"] == "ruler"} == RULER_TASKS
    # --ruler-docs replaces the essays, and only the essay haystacks
    assert {n for n, t in tasks.items() if t["params"].get("essay")} == {
        "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multivalue", "niah_multiquery"}


def test_qa_tasks_that_cannot_run_are_named() -> None:
    tasks = ruler_families()
    assert tasks["qa_1"]["family"] is None and tasks["qa_2"]["family"] is None
    line = skipped_line(tasks)
    assert line is not None and "qa_1, qa_2" in line and len(line) <= 80
    assert skipped_line(ruler_families(docs="d", qa_squad="s", qa_hotpot="h")) is None


def test_string_match_scorers() -> None:
    assert string_match_all("The numbers are 123 and 456.", ["123", "456", "789"]) == pytest.approx(2 / 3)
    assert string_match_part("Answer: PARIS\x00", ["paris", "france"]) == 1.0
    assert string_match_part("London", ["paris"]) == 0.0
    assert string_match_all_batch(["a b", "c"], [["a", "b"], ["d"]]) == 50.0
    assert string_match_part_batch(["a b", "c"], [["x", "b"], ["d"]]) == 50.0
    # RULER rounds the task score to 2 places: 2 of 3 is 66.67, not 66.666…
    assert string_match_all_batch(["a", "a", "b"], [["a"], ["a"], ["a"]]) == 66.67


def test_ruler_score_uses_expected_and_aliases() -> None:
    case = Case(cell=Cell("documents", 512, 0.5), rep=0, seed=0, messages=[], expected=["Kelvor-Dane"],
                meta={"aliases": ["Kelvor Dane"]})
    assert ruler_score(case, "it is kelvor dane", STRING_MATCH_PART) == 1.0
    assert ruler_score(case, "it is kelvor dane", STRING_MATCH_ALL) == 0.5


def _niah_parts(case: Case) -> tuple[str, str, str, str]:
    user, prefill = case.messages
    assert user["role"] == "user" and prefill["role"] == "assistant"
    first, rest = user["content"].split("\n", 1)
    context, question = rest.rsplit("\n", 1)
    return first, context, question, prefill["content"]


@pytest.mark.parametrize("task,haystack,k,v", [
    ("niah_single_1", "noise", "words", "numbers"), ("niah_single_2", "essay", "words", "numbers"),
    ("niah_single_3", "essay", "words", "uuids"), ("niah_multikey_2", "needle", "words", "numbers"),
    ("niah_multikey_3", "needle", "uuids", "uuids")])
def test_single_answer_niah_is_rulers_text(family, task, haystack, k, v) -> None:
    case = build(family, task)
    first, context, question, prefix = _niah_parts(case)
    noun = v[:-1]  # RULER drops the plural "s" when one value is asked
    key = case.meta["keys"][0]
    # RULER's template after its single-answer replacements (Some→A, are all→is, are→is)
    assert first == (f"A special magic {noun} is hidden within the following text. Make sure to memorize it. "
                     f"I will quiz you about the {noun} afterwards.")
    assert question == f"What is the special magic {noun} for {key} mentioned in the provided text?"
    assert prefix == f" The special magic {noun} for {key} mentioned in the provided text is"
    [value] = case.expected
    needle = f"One of the special magic {v} for {key} is: {value}."  # the needle keeps the plural
    assert context.count(needle) == 1
    key_re = {"words": r"[A-Za-z' -]+-[A-Za-z' -]+", "uuids": UUID}[k]  # wonderwords: "contact lens"
    value_re = {"numbers": r"[1-9]\d{6}", "uuids": UUID}[v]
    assert re.fullmatch(key_re, key) and re.fullmatch(value_re, value)
    if haystack == "noise":
        lines = context.split("\n")
        assert set(lines) == {NOISE, needle} and lines.count(needle) == 1
    elif haystack == "needle":  # a haystack made only of needles with other keys and values
        lines = context.split("\n")
        form = re.compile(rf"One of the special magic {v} for ({key_re}) is: ({value_re})\.")
        assert all(form.fullmatch(line) for line in lines), lines[:3]
        others = [form.fullmatch(line).group(2) for line in lines if line != needle]
        assert sorted(others) == sorted(case.distractors) and len(lines) > 20
    else:
        assert "\n" not in context and NOISE not in context


def test_multi_needle_niah_keeps_rulers_plural_wording(family) -> None:
    mq = build(family, "niah_multiquery")
    first, context, question, prefix = _niah_parts(mq)
    keys = mq.meta["keys"]
    query = ", ".join(keys[:-1]) + ", and " + keys[-1]
    assert first.startswith("Some special magic numbers are hidden within the following text.")
    assert question == f"What are all the special magic numbers for {query} mentioned in the provided text?"
    assert prefix == f" The special magic numbers for {query} mentioned in the provided text are"
    for key, value in zip(keys, mq.expected):
        assert context.count(f"One of the special magic numbers for {key} is: {value}.") == 1
    mv = build(family, "niah_multivalue")
    (key,) = mv.meta["keys"]
    assert len(mv.expected) == 4 and all(
        _niah_parts(mv)[1].count(f"One of the special magic numbers for {key} is: {x}.") == 1 for x in mv.expected)
    mk = build(family, "niah_multikey_1")
    assert len(mk.expected) == 1 and len(mk.distractors) == 3  # 4 keys, 1 asked


def test_niah_asked_needle_sits_at_the_cell_depth(family) -> None:
    for depth in (0.0, 0.5, 1.0):
        case = build(family, "niah_single_1", depth=depth)
        lines = _niah_parts(case)[1].split("\n")
        at = next(i for i, line in enumerate(lines) if line != NOISE)
        assert abs(at / (len(lines) - 1) - depth) <= 1 / len(lines) + 1e-9


def test_vt_is_rulers_chain_with_its_worked_example(family, tok) -> None:
    case = build(family, "vt")
    user, prefill = case.messages
    value = case.meta["value"]
    template = "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n"
    question = f"Question: Find all variables that are assigned the value {value} in the text above."
    prefix = (" Answer: According to the chain(s) of variable assignment in the text above, 5 variables are "
              "assigned the value {value}, they are: ")
    assert prefill["content"] == prefix.format(value=value)
    example, sep, task = user["content"].partition("\n" + template)
    assert sep and example.startswith(template) and task.endswith("\n" + question)
    # the example: RULER's full template, its answer prefix, two spaces, the answer, a newline
    icl = case.meta["icl_names"]
    assert re.search(r"they are:  " + " ".join(icl) + r"\n$", example + "\n")
    # RULER builds the example to at most 500 tokens (its text, no chat template): one more
    # noise line would not fit
    icl_text = example[: example.rindex("they are: ") + len("they are: ")]
    assert tok.count(icl_text) <= 500 < tok.count(icl_text) + tok.count("\n" + NOISE)
    lines = task.rsplit("\n", 1)[0].split("\n")
    chain = [line for line in lines if line != NOISE]
    names = case.expected
    assert chain == [f"VAR {names[0]} = {value}"] + [f"VAR {names[i + 1]} = VAR {names[i]} " for i in range(4)]
    assert all(re.fullmatch(r"[A-Z]{5}", n) for n in names) and re.fullmatch(r"\d{5}", value)
    assert all(re.fullmatch(r"[A-Z]{3}", n) for n in icl)


def test_cwe_is_rulers_numbered_list_with_example(family) -> None:
    case = build(family, "cwe")
    # under a chat template the worked example is its own user/assistant exchange
    # (tests/unit/test_ruler_rules.py); together they are RULER's example text
    shot, reply, user, prefill = case.messages
    head = ("Below is a numbered list of words. In these words, some appear more often than others. "
            "Memorize the ones that appear most often.\n")
    question = "\nQuestion: What are the 10 most common words in the above list?"
    prefix = " Answer: The top 10 words that appear most often in the list are:"
    assert prefill["content"] == prefix
    assert user["content"].startswith(head)
    example, main = shot["content"] + reply["content"], user["content"][len(head):]
    assert example.startswith(head)
    for text, common, rare in ((example.split(question)[0][len(head):], 10, 3), (main.split(question)[0], 30, 3)):
        items = re.findall(r"(\d+)\. (\S+)", text)
        assert [int(i) for i, _ in items] == list(range(1, len(items) + 1))
        counts = Counter(w for _, w in items)
        assert sorted(set(counts.values())) == [rare, common] and sum(c == common for c in counts.values()) == 10
    main_counts = Counter(re.findall(r"\d+\. (\S+)", main))
    assert {w for w, c in main_counts.items() if c == 30} == set(case.expected)
    ex_answer = example.split(question + prefix + " ")[1]
    assert re.fullmatch(r"1\. \S+( \d+\. \S+){9}", ex_answer)
    # RULER lists common * repeats + uncommon * repeats, shuffled with random.Random(42):
    # undo that permutation and every slot must hold one word, the common ones in answer order
    for text, common, repeats, rare in ((main.split(question)[0], case.expected, 30, 3),
                                        (example.split(question)[0][len(head):], case.meta["shot_answer"], 10, 3)):
        listed = re.findall(r"\d+\. (\S+)", text)
        perm = list(range(len(listed)))
        random.Random(42).shuffle(perm)
        m = (len(listed) - 10 * repeats) // rare
        slots: dict[tuple[str, int], str] = {}
        for j, i in enumerate(perm):
            slot = ("c", i % 10) if i < 10 * repeats else ("u", (i - 10 * repeats) % m)
            assert slots.setdefault(slot, listed[j]) == listed[j]
        assert [slots[("c", k)] for k in range(10)] == list(common)


def test_fwe_is_rulers_zipf_coded_text(family) -> None:
    case = build(family, "fwe", length=8192)
    user, prefill = case.messages
    head = ("Read the following coded text and track the frequency of each coded word. Find the three most "
            "frequently appeared coded words. ")
    question = ("\nQuestion: Do not provide any explanation. Please ignore the dots '....'. What are the three most "
                "frequently appeared words in the above coded text?")
    assert user["content"].startswith(head) and user["content"].endswith(question)
    assert prefill["content"] == " Answer: According to the coded text above, the three most frequently appeared words are:"
    words = user["content"][len(head):-len(question)].split(" ")
    counts = Counter(words)
    n = case.meta["haystack_units"]
    ranked = [w for w, _ in counts.most_common()]
    assert ranked[0] == "..."
    for rank, w in enumerate(ranked[:4], start=1):  # int(n · k^-2 / ζ(2)), RULER's Zipf counts
        assert counts[w] == int(n * rank**-2.0 / (math.pi**2 / 6))
    assert case.expected == ranked[1:4]
    # RULER lists each vocabulary word count times in vocabulary order (rank 1 = "..."), then
    # shuffles with random.Random(42): undo it, and each rank's block holds one word
    sizes = [int(n * k**-2.0 / (math.pi**2 / 6)) for k in range(1, case.meta["vocab_size"] + 1)]
    block = [k for k, c in enumerate(sizes) for _ in range(c)]
    perm = list(range(len(words)))
    random.Random(42).shuffle(perm)
    assert len(block) == len(words)
    by_rank: dict[int, str] = {}
    for j, i in enumerate(perm):
        assert by_rank.setdefault(block[i], words[j]) == words[j]
    assert [by_rank[k] for k in range(4)] == ["...", *case.expected]
    assert all(re.fullmatch(r"[a-z]{6}", w) for w in ranked[1:])


@pytest.mark.parametrize("length", [4096, 8192])
def test_prompt_plus_generation_fits_the_length(family, tok, length) -> None:
    """RULER's convention: templated prompt + tokens_to_generate <= L, and the case asks for
    exactly that many output tokens."""
    for task in sorted(RULER_TASKS - {"qa_1", "qa_2"}):
        case = build(family, task, length=length)
        ttg = TTG[task.split("_")[0]]
        assert case.max_tokens == ttg
        assert case.token_count == tok.count_chat(case.messages) == len(tok.encode_chat(case.messages))
        assert case.token_count + ttg <= length
        assert case.token_count + ttg > 0.95 * length, task  # filled, not left half empty


def test_fit_boundary_one_token() -> None:
    """The largest size whose count is <= budget: a budget one token short excludes it."""
    def render(n: int) -> Rendered:
        return Rendered("x" * n, "", [])

    def count(r: Rendered) -> int:
        return 10 + 3 * len(r.text)

    for n in (1, 7, 100, 4321):
        assert fit(render, count, 10 + 3 * n, 1, 99999)[0] == n
        assert fit(render, count, 10 + 3 * n - 1, 1, 99999)[0] == n - 1 if n > 1 else True


def test_no_two_cases_share_a_prompt(family) -> None:
    """Tasks that differ only in haystack or value type, depths and repetitions all differ."""
    hashes = [build(family, t, depth=d, rep=r).prompt_hash
              for t in sorted(RULER_TASKS - {"qa_1", "qa_2"}) for d in (0.0, 1.0) for r in (0, 1)]
    assert len(set(hashes)) == len(hashes)


def test_strict_score_is_whole_token_and_refuses_distractors(family) -> None:
    case = build(family, "niah_multikey_1")
    value, other = case.expected[0], case.distractors[0]
    assert family.score(case, f"It is {value}.").outcome == "correct"
    glued = f"It is 9{value}."  # the value inside a longer number: RULER's substring match counts it, we do not
    assert string_match_all(glued, case.expected) == 1.0 and family.score(case, glued).score == 0.0
    both = family.score(case, f"{value} or {other}")
    assert both.outcome == "distractor" and both.score == 0.0
    cwe = build(family, "cwe")
    half = family.score(cwe, " ".join(cwe.expected[:5]))
    assert half.outcome == "partial" and half.score == 0.5


def test_ruler_docs_replace_the_essay_haystack(family, tmp_path) -> None:
    sentences = [f"The {w} lighthouse keeper counted gulls along the {v} shore every morning."
                 for w in ("old", "young", "tall", "quiet", "weary") for v in ("north", "south", "east", "west")]
    (tmp_path / "essay.txt").write_text(" ".join(sentences) + "\n", encoding="utf-8")
    params = validate_params("ruler", {"task": "niah_single_2", "essay": str(tmp_path)})
    case = family.generate(Cell("niah_single_2", 4096, 0.5), 0, seed=7, params=params)
    context = _niah_parts(case)[1]
    assert "lighthouse keeper" in context and case.token_count + 128 <= 4096


def test_missing_word_lists_name_the_extra(monkeypatch) -> None:
    import sys

    from ctxprobe.errors import CtxprobeError
    from ctxprobe.families.ruler.task import vocab

    vocab.word_lists.cache_clear()
    monkeypatch.setitem(sys.modules, "wonderwords", None)
    try:
        with pytest.raises(CtxprobeError, match=r"pip install 'ctxprobe\[ruler\]'"):
            vocab.word_lists()
    finally:
        monkeypatch.undo()
        vocab.word_lists.cache_clear()
