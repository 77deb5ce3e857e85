"""Lexical overlap reported per family and flagged where a family claims low overlap
(multihop's second hop) or asks the user's own questions (documents): through the real
pipeline for niah, multihop and documents, and on hand-made records at the limits."""

from __future__ import annotations

import json

from ctxprobe.analysis.overlap import claims, overlap_stats
from ctxprobe.core.records import CaseRecord
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

DOC = "The north vault sits under the old archive.\n\nThe access code for the north vault is Kelvor-Dane.\n"


def _report(tmp_path, families: dict) -> dict:
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1k", "depths": "0,0.5,1",
                      "reps": 2, "families": families})
    store = tmp_path / "s.sqlite"
    return load_report(run_sweep(spec, store, progress=False).run_id, store).to_dict()


def _documents(tmp_path, question: str) -> dict:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vault.md").write_text(DOC)
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"document": "vault.md", "question": question, "answer": "Kelvor-Dane"}) + "\n")
    return _report(tmp_path, {"documents": {"docs": str(docs), "qa": str(qa)}})


def test_leaky_user_questions_are_flagged(tmp_path) -> None:
    # "access code north vault": 4 content words, all 4 in the evidence sentence
    data = _documents(tmp_path, "What is the access code for the north vault?")
    (stat,) = data["overlap"]
    assert stat["family"] == "documents" and stat["mean"] == 1.0 and stat["flagged"] is True
    assert stat["above"] == stat["cases"] == 6
    assert any(n.startswith("overlap flagged (documents): mean 1.00 is above 0.3") for n in data["notes"])


def test_the_flag_is_printed_by_report_in_the_terminal(tmp_path, capsys, monkeypatch) -> None:
    from ctxprobe.cli import main

    monkeypatch.setenv("COLUMNS", "80")
    data = _documents(tmp_path, "What is the access code for the north vault?")
    assert main(["report", "--details", data["run_id"], "--store", str(tmp_path / "s.sqlite"), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    text = " ".join(printed.split())
    assert "note: overlap flagged (documents): mean 1.00 is above 0.3" in text
    assert "6 of 6 cases above): literal matching may carry the score" in text
    assert "note: lexical overlap" in text and all(len(line) <= 80 for line in printed.splitlines())


def test_reworded_user_questions_are_not_flagged(tmp_path) -> None:
    # password, opens, northern, strongroom: none is a word of the evidence (no stemming)
    data = _documents(tmp_path, "Which password opens the northern strongroom?")
    (stat,) = data["overlap"]
    assert stat["mean"] == 0.0 and stat["flagged"] is False
    assert not any(n.startswith("overlap flagged") for n in data["notes"])


def test_niah_and_multihop_are_shown_and_multihop_is_checked_on_its_second_hop(tmp_path) -> None:
    data = _report(tmp_path, {"niah": {}, "multihop": {}})
    stats = {s["family"]: s for s in data["overlap"]}
    assert stats["niah"]["limit"] is None and stats["niah"]["flagged"] is False
    assert stats["niah"]["mean"] > 0  # the question names the key the needle states
    assert stats["multihop"]["role"] == "second_hop" and stats["multihop"]["largest"] == 0.0
    assert stats["multihop"]["flagged"] is False
    line = next(n for n in data["notes"] if n.startswith("lexical overlap"))
    assert "multihop 0.00 / 0.00 (second_hop)" in line


def _rec(family: str, rows: list[dict] | None = None) -> CaseRecord:
    return CaseRecord(case_id=f"{family}/L1024/d0.5/r0", family=family, length=1024, depth=0.5, rep=0, seed=0,
                      prompt_hash="p", token_count=1024, needle_token_pos=None, realised_depth=None, expected=[],
                      distractors=[], meta={} if rows is None else {"overlap": rows}, messages=[])


def test_limits_at_their_boundaries() -> None:
    hop = [{"role": "first_hop", "overlap": 0.5}, {"role": "second_hop", "overlap": 0.0}]
    leak = [{"role": "first_hop", "overlap": 0.5}, {"role": "second_hop", "overlap": 0.2}]
    (clean,) = overlap_stats([_rec("multihop", hop)] * 3)
    assert (clean.largest, clean.flagged) == (0.0, False)  # the first hop's 0.5 is not the claim
    (one,) = overlap_stats([_rec("multihop", hop)] * 3 + [_rec("multihop", leak)])
    assert (one.above, one.flagged) == (1, True)  # any case above 0 flags
    limit = claims()["documents"].limit  # the user's own questions: NoLiMa's 0.3
    assert limit == 0.3
    at = overlap_stats([_rec("documents", [{"overlap": limit}])])[0]
    over = overlap_stats([_rec("documents", [{"overlap": limit + 0.01}])])[0]
    assert at.flagged is False and over.flagged is True  # "above" the limit: equal passes
    # a label whose family is documents is judged as documents
    (named,) = overlap_stats([_rec("mydocs", [{"overlap": 0.9}])], {"mydocs": "documents"})
    assert named.flagged and named.name == "documents"
    assert overlap_stats([_rec("echo")]) == []
