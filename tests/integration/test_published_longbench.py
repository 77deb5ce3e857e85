"""LongBench v2's JSON as a pack: prompts as its pred.py builds them, scored by its rule,
checked against an independent re-implementation of that rule (THUDM/LongBench pred.py:
``extract_answer`` and ``judge = pred == answer``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ctxprobe.cli import main
from ctxprobe.report.load import load_report
from ctxprobe.scores.originals import longbench_v2_extract
from ctxprobe.store import iter_export
from ctxprobe.sweep.packs import run_pack

DOC = (Path(__file__).resolve().parents[2] / "examples" / "natural" / "docs" / "harbour.md").read_text()


def _their_rule(response: str, answer: str) -> bool:
    """Written from the description of pred.py, not from ctxprobe's code."""
    response = response.replace("*", "")
    found = re.findall(r"The correct answer is \(([A-D])\)", response)
    if not found:
        found = re.findall(r"The correct answer is ([A-D])", response)
    return bool(found) and found[0] == answer


def _items() -> list[dict]:
    base = {"domain": "Single-Document QA", "sub_domain": "x", "difficulty": "easy", "length": "short",
            "context": DOC}
    return [
        {**base, "_id": "a", "question": "Which name goes with biggest, boat, moored and schooner in the text?",
         "choice_A": "Tavish Orme", "choice_B": "Marisol Grey", "choice_C": "Corwen", "choice_D": "Tobias Wren",
         "answer": "B"},
        {**base, "_id": "b", "question": "Which year goes with harbor, wall, constructed and anglers in the text?",
         "choice_A": "1822", "choice_B": "1809", "choice_C": "1877", "choice_D": "1791", "answer": "A"},
        {**base, "_id": "c", "question": "Which number goes with autumn, fleet, ships and sailed in the text?",
         "choice_A": "240", "choice_B": "12", "choice_C": "3", "choice_D": "46", "answer": "C"},  # wrong key: 46 is D
    ]


def test_extraction_matches_an_independent_reimplementation() -> None:
    replies = ["The correct answer is (B)", "**The correct answer is (B)**", "The correct answer is B.",
               "the correct answer is (B)", "The correct answer is (E)", "The correct answer is (b)",
               "I think (B). The correct answer is (C)", "The correct answer is B or The correct answer is (C)",
               "", "The correct answer is  (B)"]
    for reply in replies:
        for answer in "ABCD":
            assert (longbench_v2_extract(reply) == answer) == _their_rule(reply, answer), (reply, answer)


def test_a_longbench_file_runs_and_scores_like_its_rule(tmp_path: Path) -> None:
    data = tmp_path / "data.json"
    data.write_text(json.dumps(_items()))
    pack = tmp_path / "pack.jsonl"
    assert main(["import-published", "longbench-v2", str(data), "-o", str(pack), "--tokenizer", "local"]) == 0
    first = json.loads(pack.read_text().splitlines()[0])
    content = first["messages"][0]["content"]
    assert content.startswith("Please read the following text and answer the question below.\n\n<text>\n")
    assert content.endswith('(D) Tobias Wren\n\nFormat your response as follows: "The correct answer is (insert answer here)".')
    store = tmp_path / "s.sqlite"
    result = run_pack(str(pack), model="sim:perfect", store_path=store, progress=False)
    rows = list(iter_export(result.run_id, store))
    assert len(rows) == 3
    for row in rows:
        answer = row["expected"][0]
        assert row["score"] == float(_their_rule(row["output"], answer))
    assert sorted(r["score"] for r in rows) == [0.0, 1.0, 1.0]
    assert load_report(result.run_id, store).profiles[0].family == "documents"
