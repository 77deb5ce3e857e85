"""``documents`` for natural cases: the other documents as distractors, the answer's token
position, multiple choice scored by LongBench v2's rule; the shipped example end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.outcome import Outcome
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.haystack.context import BuildContext
from ctxprobe.families.documents.task import Documents, DocumentsParams
from ctxprobe.tokenizers import resolve_tokenizer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "natural"
CHOICE = {"document": "harbour.md", "question": "When was the harbor wall built?",
          "choices": ["1809", "1822", "1877", "1791"], "answer": "B"}


def _family() -> Documents:
    return Documents(BuildContext(resolve_tokenizer("local"), None))


def _params(tmp_path: Path, lines: list[dict], **extra) -> DocumentsParams:
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return DocumentsParams(docs=str(EXAMPLE / "docs"), qa=str(qa), **extra)


def test_distractor_documents_surround_the_asked_one_and_the_answer_is_located(tmp_path: Path) -> None:
    fam, tok = _family(), resolve_tokenizer("local")
    item = json.loads((EXAMPLE / "qa.jsonl").read_text().splitlines()[0])
    params = _params(tmp_path, [item], filler="documents")
    depths = {}
    for depth in (0.0, 0.5, 1.0):
        case = fam.generate(Cell("documents", 2048, depth), 0, seed=1, params=params)
        meta = case.meta
        assert 0 <= 2048 - case.token_count <= fill_tolerance(2048)
        shown = meta["distractor_documents"]
        assert shown and item["document"] not in shown and set(shown) <= {p.name for p in (EXAMPLE / "docs").iterdir()}
        text = case.messages[0]["content"]
        assert f'<document name="{item["document"]}">' in text
        pos = meta["answer_token_pos"]
        width = len(tok.encode(" " + item["answer"]))
        assert pos is not None and tok.decode(list(case.prompt_ids[pos:pos + width])).strip() == item["answer"]
        assert meta["answer_depth"] == round(pos / case.token_count, 6)
        depths[depth] = meta["answer_depth"]
    assert depths[0.0] < depths[0.5] < depths[1.0]


def test_distractor_filler_needs_other_documents(tmp_path: Path) -> None:
    docs = tmp_path / "one"
    docs.mkdir()
    shutil.copy(EXAMPLE / "docs" / "harbour.md", docs / "harbour.md")
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps(CHOICE) + "\n")
    with pytest.raises(CtxprobeError, match="needs documents besides 'harbour.md'"):
        _family().generate(Cell("documents", 1024, 0.5), 0, seed=0,
                           params=DocumentsParams(docs=str(docs), qa=str(qa), filler="documents"))


def test_multiple_choice_is_asked_and_scored_as_longbench_v2(tmp_path: Path) -> None:
    fam = _family()
    case = fam.generate(Cell("documents", 1024, 0.5), 0, seed=0, params=_params(tmp_path, [CHOICE]))
    assert case.messages[0]["content"].endswith(
        'Question: When was the harbor wall built?\nChoices:\n(A) 1809\n(B) 1822\n(C) 1877\n(D) 1791\n'
        'Format your response as follows: "The correct answer is (insert answer here)".')
    assert case.meta["choices"] == CHOICE["choices"] and case.expected == ["B"]
    for output, score, outcome in (("The correct answer is (B)", 1.0, Outcome.CORRECT),
                                   ("**The correct answer is B**", 1.0, Outcome.CORRECT),
                                   ("The correct answer is (C)", 0.0, Outcome.WRONG),
                                   ("the correct answer is (B)", 0.0, None),  # case-sensitive: nothing extracted
                                   ("B", 0.0, None)):
        s = fam.score(case, output)
        assert s.score == score, output
        if outcome is not None:
            assert s.outcome == outcome
        else:
            assert s.outcome != Outcome.CORRECT and s.detail["choice"] is None


@pytest.mark.parametrize("line, message", [
    ({**CHOICE, "choices": ["1", "2", "3"]}, "four non-empty strings"),
    ({**CHOICE, "answer": "E"}, "letter A, B, C or D"),
    ({**CHOICE, "answer": "1822"}, "letter A, B, C or D"),
])
def test_bad_choice_lines_are_named(tmp_path: Path, line: dict, message: str) -> None:
    with pytest.raises(CtxprobeError, match=message):
        _family().generate(Cell("documents", 1024, 0.5), 0, seed=0, params=_params(tmp_path, [line]))


def test_the_shipped_example_end_to_end_on_a_sim(tmp_path: Path) -> None:
    """sim:perfect reads the 30 checked questions among the other documents at 1K and 2K."""
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1k,2k", "depths": "0,0.5,1",
                      "reps": 30, "families": {"documents": {"docs": str(EXAMPLE / "docs"),
                                                             "qa": str(EXAMPLE / "qa.jsonl"), "filler": "documents"}}})
    result = run_sweep(spec, tmp_path / "s.sqlite", progress=False)
    prof = load_report(result.run_id, tmp_path / "s.sqlite").profiles[0]
    assert all(s.n == 90 for s in prof.lengths)
    assert all(s.mean is not None and s.mean >= 0.9 for s in prof.lengths), [(s.length, s.mean) for s in prof.lengths]


def test_case_type_is_unchanged_for_plain_lines(tmp_path: Path) -> None:
    case = _family().generate(Cell("documents", 1024, 0.5), 0, seed=0,
                              params=_params(tmp_path, [json.loads((EXAMPLE / "qa.jsonl").read_text().splitlines()[0])]))
    assert isinstance(case, Case) and "choices" not in case.meta and "distractor_documents" not in case.meta
