"""``documents``: the user's own cases through the real pipeline, their errors, their scoring."""

from __future__ import annotations

import json
import re

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell, Case
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import validate_params
from ctxprobe.families.documents.task import Documents, DocumentsParams
from ctxprobe.scores.answers import normalize_answer
from ctxprobe.tokenizers import resolve_tokenizer

VAULT = """# Vault notes

The north vault sits under the old archive.

The access code for the north vault is Kelvor-Dane.
Staff rotate the code every season.
"""
GARDEN = "The greenhouse is kept warm all winter.\nThe head gardener of the east greenhouse is Marisol Tenby.\n"
QA = [
    {"document": "vault.md", "question": "What is the access code for the north vault?", "answer": "Kelvor-Dane",
     "aliases": ["Kelvor Dane"]},
    {"document": "garden.txt", "question": "Who is the head gardener of the east greenhouse?",
     "answer": "Marisol Tenby"},
]


def _write(tmp_path, qa_lines: list[str] | None = None, extra_docs: dict[str, str] | None = None):
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "vault.md").write_text(VAULT)
    (docs / "garden.txt").write_text(GARDEN)
    for name, text in (extra_docs or {}).items():
        (docs / name).write_text(text)
    qa = tmp_path / "qa.jsonl"
    lines = qa_lines if qa_lines is not None else [json.dumps(q) for q in QA]
    qa.write_text("\n".join(lines) + "\n")
    return str(docs), str(qa)


def _sweep(model: str, tmp_path, depths: str = "0,0.5,1", **params):
    docs, qa = _write(tmp_path)
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": "512,1k,2k", "depths": depths, "reps": 2,
                      "families": {"documents": {"docs": docs, "qa": qa, **params}}})
    store = tmp_path / "s.sqlite"
    result = run_sweep(spec, store, progress=False)
    return result, store, load_report(result.run_id, store).profiles[0]


def test_perfect_reads_every_case(tmp_path) -> None:
    _, _, prof = _sweep("sim:perfect", tmp_path)
    assert len(prof.cells) == 9 and all(c.mean == 1.0 and c.n == 2 for c in prof.cells)


def test_echo_and_blind_middle_fail_where_they_cannot_read(tmp_path) -> None:
    (tmp_path / "e").mkdir()
    (tmp_path / "b").mkdir()
    _, _, echo = _sweep("sim:echo", tmp_path / "e")
    assert all(c.mean == 0.0 for c in echo.cells)
    _, _, blind = _sweep("sim:blind-middle", tmp_path / "b")
    by_depth = {c.depth: c.mean for c in blind.cells if c.length == 2048}
    assert by_depth == {0.0: 1.0, 0.5: 0.0, 1.0: 1.0}


def test_exported_cases_are_exact_and_ask_question_r_mod_n(tmp_path) -> None:
    result, store, _ = _sweep("sim:perfect", tmp_path)
    tok = resolve_tokenizer("local")
    for rec in iter_export(result.run_id, store):
        recount = tok.count_chat(rec["messages"])
        assert recount == rec["token_count"] <= rec["length"]
        assert rec["length"] - recount <= fill_tolerance(rec["length"])
        want = QA[rec["rep"] % len(QA)]
        assert rec["meta"]["document"] == want["document"] and rec["expected"] == [want["answer"]]
        content = rec["messages"][-1]["content"]
        assert content.count(want["answer"]) == 1  # only inside its document, never in filler
        assert rec["meta"]["answer_in_document"] and rec["meta"]["overlap"][0]["overlap"] > 0
        # placed at the filler boundary nearest depth x (haystack with the document in it),
        # measured without the document: off by at most half a filler sentence (<= 40
        # tokens of prose) plus depth x the document, over the rest of the haystack
        rest = rec["meta"]["haystack_tokens"] - rec["meta"]["document_tokens"]
        bound = (20 + rec["depth"] * rec["meta"]["document_tokens"]) / rest
        assert abs(rec["realised_depth"] - rec["depth"]) <= bound


def test_other_documents_filler_never_leaks_the_answer(tmp_path) -> None:
    leaky = " ".join(f"Note {i} of the ledger says the visitor met Marisol Tenby at the gate." if i % 3 == 0
                     else f"Line {i} of the ledger records a quiet day at the gate." for i in range(60))
    docs, qa = _write(tmp_path, extra_docs={"ledger.txt": leaky})
    fam = Documents(BuildContext(resolve_tokenizer("local"), None))
    params = DocumentsParams(docs=docs, qa=qa, filler="other-documents")
    case = fam.generate(Cell("documents", 1024, 0.5), 1, seed=0, params=params)
    content = case.messages[-1]["content"]
    assert content.count("Marisol Tenby") == 1 and "ledger" in content


@pytest.mark.parametrize(("lines", "line_no", "fragment"), [
    (['{"document": "vault.md", "question": "q?", "answer": "a"}', "", "{not json"], 3, "not valid JSON"),
    (['["a list"]'], 1, "JSON object"),
    (['{"document": "vault.md", "question": "q?"}'], 1, "'answer'"),
    (['{"document": "missing.md", "question": "q?", "answer": "a"}'], 1, "missing.md"),
    (['{"document": "vault.md", "question": "q?", "answer": "a", "alias": ["x"]}'], 1, "unknown key 'alias'"),
    (['{"document": "vault.md", "question": "q?", "answer": "a", "aliases": "x"}'], 1, "aliases"),
    (['{"document": "vault.md", "question": "q?", "answer": "?!"}'], 1, "empty once normalised"),
])
def test_malformed_qa_lines_are_named(tmp_path, lines: list[str], line_no: int, fragment: str) -> None:
    docs, qa = _write(tmp_path, lines)
    fam = Documents(BuildContext(resolve_tokenizer("local"), None))
    with pytest.raises(CtxprobeError) as err:
        fam.generate(Cell("documents", 1024, 0.5), 0, seed=0, params=DocumentsParams(docs=docs, qa=qa))
    msg = str(err.value)
    assert f"{qa} line {line_no}" in msg and fragment in msg and "\n" not in msg


def test_missing_inputs_and_unknown_params(tmp_path) -> None:
    fam = Documents(BuildContext(resolve_tokenizer("local"), None))
    with pytest.raises(CtxprobeError, match="documents folder"):
        fam.generate(Cell("documents", 1024, 0.5), 0, seed=0,
                     params=DocumentsParams(docs=str(tmp_path / "nope"), qa=str(tmp_path / "qa.jsonl")))
    docs, _ = _write(tmp_path)
    with pytest.raises(CtxprobeError, match="cannot read QA file"):
        fam.generate(Cell("documents", 1024, 0.5), 0, seed=0, params=DocumentsParams(docs=docs, qa=str(tmp_path / "x")))
    with pytest.raises(CtxprobeError, match="unknown parameter 'doc'"):
        validate_params("documents", {"docs": "x", "qa": "y", "doc": "z"})


def test_document_longer_than_the_length_is_refused_before_sending(tmp_path) -> None:
    long_doc = " ".join(f"Paragraph {i} describes the archive shelves in patient detail." for i in range(200))
    qa_line = json.dumps({"document": "long.txt", "question": "What is the shelf count?", "answer": "nine"})
    docs, qa = _write(tmp_path, [json.dumps(QA[0]), qa_line], extra_docs={"long.txt": long_doc})
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1k,8k", "depths": "0.5",
                      "families": {"documents": {"docs": docs, "qa": qa}}})
    with pytest.raises(CtxprobeError, match=r"document 'long\.txt' needs \d+ tokens .* length 1024") as err:
        run_sweep(spec, tmp_path / "s.sqlite", progress=False)
    assert "\n" not in str(err.value)


def test_normalisation() -> None:
    assert normalize_answer("  The Kelvor-Dane!  ") == "kelvordane"
    assert normalize_answer("An answer, a  test") == "answer test"
    assert normalize_answer("3,000 Euros.") == "3000 euros"
    assert normalize_answer("A") == "a" and normalize_answer("(b)") == "b"


def _case(match: str = "contains") -> Case:
    return Case(cell=Cell("documents", 512, 0.5), rep=0, seed=0, messages=[], expected=["Marisol Tenby"],
                meta={"aliases": ["M. Tenby"], "match": match, "question": "Who?"})


@pytest.mark.parametrize(("output", "match", "score", "outcome"), [
    ("Marisol Tenby", "contains", 1.0, "correct"),
    ("It is marisol tenby.", "contains", 1.0, "correct"),
    ("m tenby", "contains", 1.0, "correct"),
    ("Marisol Tenbyson", "contains", 0.0, "wrong"),
    ("It is marisol tenby.", "exact", 0.0, "wrong"),
    ("The Marisol Tenby", "exact", 1.0, "correct"),
    ("I could not find it.", "contains", 0.0, "not_found"),
])
def test_scoring(output: str, match: str, score: float, outcome: str) -> None:
    s = Documents(BuildContext(resolve_tokenizer("local"), None)).score(_case(match), output)
    assert (s.score, s.outcome) == (score, outcome)
    assert re.fullmatch(r"(correct|wrong|not_found)", s.outcome)


@pytest.mark.parametrize(("output", "exact", "contains"), [
    ("Marisol Tenby", True, True),
    ("The Marisol Tenby.", True, True),
    ("It is marisol tenby.", False, True),
    ("Zebedee", False, False),  # sorts after the answer
    ("Abel", False, False),  # sorts before it
    ("M. Tenby", True, True),  # an alias
])
def test_scoring_detail_flags(output: str, exact: bool, contains: bool) -> None:
    fam = Documents(BuildContext(resolve_tokenizer("local"), None))
    for match in ("exact", "contains"):
        s = fam.score(_case(match), output)
        assert (s.detail["exact"], s.detail["contains"]) == (exact, contains)
        assert s.score == float(exact if match == "exact" else contains)


def test_exact_match_mode_read_back_from_the_store() -> None:
    """meta["match"] of a rescored case comes out of stored JSON: an equal string, not the literal."""
    case = _case(json.loads('"exact"'))
    s = Documents(BuildContext(resolve_tokenizer("local"), None)).score(case, "It is marisol tenby.")
    assert (s.score, s.outcome) == (0.0, "wrong")


def test_a_judge_case_scored_by_the_family_falls_back_to_contains() -> None:
    """Without a judge's grade (none configured, or a rescore), ``match: judge`` cases are
    scored by the family's own rule, ``contains``: never the stricter exact match."""
    s = Documents(BuildContext(resolve_tokenizer("local"), None)).score(_case("judge"), "It is marisol tenby.")
    assert (s.score, s.outcome) == (1.0, "correct")
