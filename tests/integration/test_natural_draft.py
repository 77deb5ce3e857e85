"""draft-questions on the shipped example corpus with a sim drafter: the planted bad
questions are rejected by the check that must reject them, every other pair is kept, and a
rerun resends nothing (examples/natural/planted.json names the planted sentences)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxprobe.cli import main
from ctxprobe.natural.checks import document_checks, occurrences
from ctxprobe.natural.draft import DraftConfig, draft_questions, passages
from ctxprobe.natural.prompts import parse_pairs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "natural"


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_sim_drafter_rejects_the_planted_pairs_and_keeps_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "qa.jsonl"
    result = draft_questions(DraftConfig(docs=str(EXAMPLE / "docs"), model="sim:perfect", out=str(out)))
    planted = {p["evidence"]: p["reason"] for p in json.loads((EXAMPLE / "planted.json").read_text())["planted"]}
    rejected = _lines(tmp_path / "qa.rejected.jsonl")
    kept = _lines(out)
    assert result.kept == len(kept) >= 24 and result.rejected == len(rejected)
    by_evidence = {r["evidence"]: r["reasons"] for r in rejected}
    for evidence, reason in planted.items():
        assert reason in by_evidence.get(evidence, []), (evidence, by_evidence.get(evidence))
    assert set(by_evidence) == set(planted)  # nothing else rejected
    assert not {k["evidence"] for k in kept} & set(planted)
    # the shipped checked QA file is what the sim drafter keeps
    shipped = [(q["document"], q["question"], q["answer"]) for q in _lines(EXAMPLE / "qa.jsonl")]
    assert [(q["document"], q["question"], q["answer"]) for q in kept] == shipped
    repeated = next(r for r in rejected if "answer_repeated" in r["reasons"])
    assert len(repeated["checks"]["occurrences"]) == 2  # the occurrences are listed


def test_a_rerun_reuses_the_journal_and_a_cut_line_is_sent_again(tmp_path: Path) -> None:
    cfg = DraftConfig(docs=str(EXAMPLE / "docs"), model="sim:perfect", out=str(tmp_path / "qa.jsonl"), n=10)
    first = draft_questions(cfg)
    assert first.calls_sent > 0 and first.calls_reused == 0
    journal = tmp_path / "qa.calls.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20] + "\n")  # interrupted mid-line
    again = draft_questions(cfg)
    assert again.calls_sent == 1 and again.calls_reused == first.calls_sent - 1
    assert (tmp_path / "qa.jsonl").read_text() == Path(first.kept_path).read_text()
    assert again.kept == first.kept == 10 - again.rejected


def test_checks_at_their_boundaries() -> None:
    doc = "The mill opened in 1840.\nIts owner paid 1840 pounds for the wheel."
    assert [o["sentence"] for o in occurrences("1840", doc)] == ["The mill opened in 1840.",
                                                                "Its owner paid 1840 pounds for the wheel."]
    assert occurrences("184", doc) == []  # whole words only
    # overlap: 2 of 4 question content words in the evidence is 0.5: kept at 0.5, rejected below
    q, ev = "Which mill opened beside rivers?", "The mill opened in 1840."
    assert document_checks(q, "1840", ev, "The mill opened in 1840.", 0.5).reasons == []
    assert document_checks(q, "1840", ev, "The mill opened in 1840.", 0.49).reasons == ["overlap"]
    assert document_checks(q, "1841", ev, "The mill opened in 1840.").reasons == ["answer_absent"]


def test_reply_lines_that_are_not_pairs_are_counted_not_kept() -> None:
    pairs, bad = parse_pairs('{"question": "Q?", "answer": "A", "evidence": "E."}\nnot json\n{"question": "Q"}\nNONE\n')
    assert [p.answer for p in pairs] == ["A"] and bad == 2


def test_passages_keep_paragraphs_whole_and_in_order() -> None:
    docs = {"b.md": "one two three\nfour five", "a.md": "x " * 10}
    assert passages(docs, 4) == [("a.md", "x " * 10), ("b.md", "one two three"),
                                 ("b.md", "four five")]


def test_cli_plans_then_drafts(tmp_path: Path, capsys) -> None:
    out = tmp_path / "qa.jsonl"
    assert main(["draft-questions", str(EXAMPLE / "docs"), "--model", "sim:perfect", "-o", str(out), "--plan"]) == 0
    assert "drafting calls" in capsys.readouterr().out and not out.exists()
    assert main(["draft-questions", str(EXAMPLE / "docs"), "--model", "sim:perfect", "-o", str(out), "--n", "12",
                 "--closed-book-model", "sim:blind-middle", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "kept" in printed and out.exists()
    first = _lines(out)[0]
    assert set(first["checks"]["closed_book"]) == {"sim:perfect", "sim:blind-middle"}
    assert main(["draft-questions", str(tmp_path / "none"), "--model", "sim:perfect", "-o", str(out)]) == 2
    assert main(["draft-questions", str(EXAMPLE / "docs"), "--model", "sim:perfect", "-o", str(out), "--n", "0"]) == 2
    assert "--n must be at least 1" in capsys.readouterr().err


def test_drafting_through_the_provider_path_over_loopback_http(tmp_path: Path) -> None:
    """The same drafter served over an OpenAI-compatible loopback server (the normal
    provider path real models take) keeps the same pairs as in process."""
    from ctxprobe.models import resolve_provider
    from ctxprobe.sim.server import SimServer
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server, \
            SimServer(resolve_provider("sim:first-half", tok), tok) as second:
        url, url2 = server.start(), second.start()
        cfg = DraftConfig(docs=str(EXAMPLE / "docs"), model=f"openai-compat:sim@{url}", out=str(tmp_path / "qa.jsonl"),
                          closed_book_model=f"openai-compat:other@{url2}", tokenizer="local")
        result = draft_questions(cfg)
    kept = [(q["document"], q["question"], q["answer"]) for q in _lines(tmp_path / "qa.jsonl")]
    shipped = [(q["document"], q["question"], q["answer"]) for q in _lines(EXAMPLE / "qa.jsonl")]
    assert kept == shipped and result.failed_calls == 0
    assert len(_lines(tmp_path / "qa.jsonl")[0]["checks"]["closed_book"]) == 2


def test_max_cost_refuses_a_dearer_plan_before_sending(tmp_path: Path, capsys) -> None:
    out = tmp_path / "qa.jsonl"
    # openai:gpt-4o is priced; the plan is counted with the approximate tokenizer, nothing is sent
    code = main(["draft-questions", str(EXAMPLE / "docs"), "--model", "openai/gpt-4o", "--tokenizer", "approx",
                 "-o", str(out), "--max-cost", "0.0001"])
    printed = capsys.readouterr()
    assert code == 2 and "exceeds --max-cost" in printed.err and "$" in printed.out
    assert not out.exists() and not (tmp_path / "qa.calls.jsonl").exists()


def test_overlap_is_measured_against_the_document_when_the_evidence_is_not_quoted() -> None:
    doc = "The mill opened in 1840 by the river."
    q = "When did the mill open by the river?"
    quoted = document_checks(q, "1840", "The mill opened in 1840 by the river.", doc)
    invented = document_checks(q, "1840", "A watermill started work that year.", doc)
    assert quoted.detail["overlap_against"] == "evidence" and "overlap" in quoted.reasons
    # a paraphrased evidence sentence cannot hide the overlap with the sentence that states the answer
    assert invented.detail["overlap_against"] == "answer sentences" and "overlap" in invented.reasons
    assert not invented.detail["evidence_in_document"]
