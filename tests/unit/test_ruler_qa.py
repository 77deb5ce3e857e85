"""RULER's QA tasks over RULER's own file formats (tiny made-up SQuAD / HotpotQA files):
read as RULER's qa.py reads them, every paragraph a separate ``Document i:``, the list
shuffled with RULER's fixed seed, the QA template and answer prefix exact."""

from __future__ import annotations

import json
import random
import re

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.families.ruler.task import ruler_families, skipped_line
from ctxprobe.tokenizers import resolve_tokenizer

HEAD = ("Answer the question based on the given documents. Only give me the answer and do not output any other "
        "words.\n\nThe following are given documents.\n\n")
MID = ("\n\nAnswer the question based on the given documents. Only give me the answer and do not output any other "
       "words.\n\nQuestion: ")
WORDS = "amber river stone lantern quiet meadow copper orchard violet harbor silver thistle".split()


def _para(rng: random.Random, tag: str) -> str:
    return f"{tag} " + " ".join(rng.choice(WORDS) for _ in range(60)) + "."


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = random.Random(3)
    d = tmp_path_factory.mktemp("qa")
    articles = []
    for a in range(12):
        paragraphs = []
        for p in range(4):
            paragraphs.append({"context": _para(rng, f"Article{a}para{p}"), "qas": [
                {"question": f"Which word opens paragraph {p} of article {a}?", "is_impossible": False,
                 "answers": [{"text": f"Article{a}para{p}"}]},
                {"question": "unanswerable?", "is_impossible": True, "answers": []}]})
        articles.append({"title": f"A{a}", "paragraphs": paragraphs})
    squad = d / "squad.json"
    squad.write_text(json.dumps({"data": articles}))
    hotpot_items = []
    for q in range(8):
        ctx = [[f"Title{q}-{k}", [_para(rng, f"Q{q}S{k}a"), " " + _para(rng, f"Q{q}S{k}b")]] for k in range(10)]
        hotpot_items.append({"question": f"What links {q}?", "answer": f"Q{q}S0a", "context": ctx})
    hotpot = d / "hotpot.json"
    hotpot.write_text(json.dumps(hotpot_items))
    return str(squad), str(hotpot)


def _read_squad(path):  # RULER's read_squad, re-typed from the original
    data = json.load(open(path))
    total_docs = sorted(list(set([p["context"] for d in data["data"] for p in d["paragraphs"]])))
    total_docs_dict = {c: idx for idx, c in enumerate(total_docs)}
    total_qas = []
    for d in data["data"]:
        more_docs = [total_docs_dict[p["context"]] for p in d["paragraphs"]]
        for p in d["paragraphs"]:
            for qas in p["qas"]:
                if not qas["is_impossible"]:
                    total_qas.append({"query": qas["question"], "outputs": [a["text"] for a in qas["answers"]],
                                      "context": [total_docs_dict[p["context"]]],
                                      "more_context": [i for i in more_docs if i != total_docs_dict[p["context"]]]})
    return total_qas, total_docs


def _read_hotpot(path):  # RULER's read_hotpotqa
    data = json.load(open(path))
    total_docs = sorted(list(set([f"{t}\n{''.join(p)}" for d in data for t, p in d["context"]])))
    total_docs_dict = {c: idx for idx, c in enumerate(total_docs)}
    return [{"query": d["question"], "outputs": [d["answer"]],
             "context": [total_docs_dict[f"{t}\n{''.join(p)}"] for t, p in d["context"]]} for d in data], total_docs


def _documents(text: str) -> list[str]:
    body = text[len(HEAD):text.index(MID)]
    parts = re.split(r"(?:^|\n\n)Document (\d+):\n", body)
    assert parts[0] == ""
    numbers, docs = [int(x) for x in parts[1::2]], parts[2::2]
    assert numbers == list(range(1, len(docs) + 1))
    return docs


@pytest.mark.parametrize("task,length", [("qa_1", 4096), ("qa_1", 2048), ("qa_2", 4096)])
def test_qa_is_rulers_layout(files, task, length) -> None:
    tok = resolve_tokenizer("local")
    path = files[0] if task == "qa_1" else files[1]
    fam = make_family("ruler", BuildContext(tok, None))
    case = fam.generate(Cell(task, length, 0.5), 0, seed=5,
                        params=validate_params("ruler", {"task": task, "qa_file": path}))
    qas, docs = _read_squad(path) if task == "qa_1" else _read_hotpot(path)
    item = qas[case.meta["qa_index"]]
    user, prefill = case.messages
    assert prefill == {"role": "assistant", "content": " Answer:"}
    assert user["content"].startswith(HEAD) and user["content"].endswith(MID + item["query"])
    assert case.expected == item["outputs"] and case.max_tokens == 32
    assert case.token_count + 32 <= length
    shown = _documents(user["content"])
    n = len(shown)
    assert n == case.meta["n_docs"]
    gold = [docs[i] for i in item["context"]]
    if n < len(docs):
        assert len(set(shown)) == n and set(shown) <= set(docs)
        # RULER lists the gold paragraphs first, then shuffles with its fixed seed 42
        order = list(range(n))
        random.Random(42).shuffle(order)
        assert [shown[order.index(j)] for j in range(len(gold))] == gold
        more = {docs[i] for i in item.get("more_context", [])}
        if n - len(gold) <= len(more):
            assert set(shown) - set(gold) <= more  # same-article paragraphs come first
    else:
        assert set(gold) <= set(shown)
    assert all(g in shown for g in gold)  # each supporting paragraph is its own document


def test_qa_tasks_run_when_their_files_are_given(files) -> None:
    tasks = ruler_families(qa_squad=files[0], qa_hotpot=files[1])
    assert tasks["qa_1"]["family"] == "ruler" and tasks["qa_2"]["params"] == {"task": "qa_2", "qa_file": files[1]}
    assert skipped_line(tasks) is None
    assert skipped_line(ruler_families(qa_squad=files[0])) == "ruler: qa_2 not run: need --ruler-qa-squad/--ruler-qa-hotpot FILE"


def test_qa_file_errors_are_one_line(tmp_path) -> None:
    with pytest.raises(CtxprobeError, match="needs its dataset file"):
        validate_params("ruler", {"task": "qa_1"})
    bad = tmp_path / "bad.json"
    bad.write_text('{"nope": 1}')
    fam = make_family("ruler", BuildContext(resolve_tokenizer("local"), None))
    with pytest.raises(CtxprobeError, match="is not SQuAD v2.0 JSON") as err:
        fam.generate(Cell("qa_1", 4096, 0.5), 0, seed=1, params=validate_params("ruler", {"task": "qa_1",
                                                                                          "qa_file": str(bad)}))
    assert "\n" not in str(err.value)


def test_qa_strict_score_takes_any_reference_as_a_whole_phrase(files) -> None:
    fam = make_family("ruler", BuildContext(resolve_tokenizer("local"), None))
    case = fam.generate(Cell("qa_1", 4096, 0.5), 0, seed=5,
                        params=validate_params("ruler", {"task": "qa_1", "qa_file": files[0]}))
    case.expected = ["Denver Broncos", "the Broncos"]  # SQuAD's alternative answers
    assert fam.score(case, " the Denver Broncos.").outcome == "correct"
    assert fam.score(case, "Broncos").score == 0.0  # neither reference as a whole phrase
    assert fam.score(case, "the Denver Broncosx").score == 0.0
