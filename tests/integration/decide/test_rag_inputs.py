"""decide --rag's inputs: the look-alike axis as --param values, the tolerance rule at its
boundary, chunks from a documents folder, and each bad input as one line saying what to run."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.analysis.distractors import distractor_tolerance
from ctxprobe.analysis.efflength import effective_lengths
from ctxprobe.cli import main
from ctxprobe.core.rows import ResultRow
from ctxprobe.decide.rag_cases import build_case, slots
from ctxprobe.decide.rag_chunks import doc_chunks, paragraphs
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.merge import merge_spec
from ctxprobe.store import Store


def test_a_param_list_is_an_axis_of_labels_the_first_the_reference() -> None:
    spec = merge_spec(None, {"lengths": [1024]}, family="niah", params=["niah.distractors=0,3,10"])
    fams = spec.model_dump()["families"]
    assert list(fams) == ["niah~distractors0", "niah~distractors3", "niah~distractors10"]
    assert [fams[f]["distractors"] for f in fams] == [0, 3, 10]
    assert merge_spec(None, {}, family="niah", params=["niah.distractors=3"]).model_dump()["families"] == {
        "niah": {"distractors": 3}}
    with pytest.raises(CtxprobeError, match="two different values"):
        merge_spec(None, {}, family="niah", params=["niah.distractors=3,3"])


def _rows(label: str, hits: int, n: int) -> list[ResultRow]:
    return [ResultRow(label, 1024, 0.5, i, "correct" if i < hits else "wrong", 1.0 if i < hits else 0.0)
            for i in range(n)]


@pytest.mark.parametrize(("n", "tolerated"), [(24, 3), (23, None)])
def test_tolerance_needs_the_lower_bound_at_the_bar(n: int, tolerated: int | None) -> None:
    """All-correct cases show the bar 0.856 from 24 on (0.025^(1/24) >= 0.856 > 0.025^(1/23))."""
    families = {f"niah~distractors{c}": {"family": "niah", "distractors": c} for c in (0, 1, 3)}
    rows = [r for c in (0, 1, 3) for r in _rows(f"niah~distractors{c}", n, n)]
    intervals = {iv.family: iv for iv in effective_lengths(rows, threshold=0.856, draws=1)}
    (tol,) = distractor_tolerance(rows, families, intervals, {}, bar=0.856)
    assert tol.lo == tolerated
    assert "tolerates" in tol.line() and "interval" in tol.line()


def test_tolerance_stops_at_the_first_failing_count() -> None:
    families = {f"niah~distractors{c}": {"family": "niah", "distractors": c} for c in (0, 1, 3)}
    rows = _rows("niah~distractors0", 40, 40) + _rows("niah~distractors1", 10, 40) + _rows("niah~distractors3", 40, 40)
    intervals = {iv.family: iv for iv in effective_lengths(rows, threshold=0.856, draws=1)}
    (tol,) = distractor_tolerance(rows, families, intervals, {}, bar=0.856)
    assert (tol.lo, tol.hi) == (0, 0)


def test_chunks_from_documents_pack_paragraphs_up_to_each_size(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one two three\n\nfour five\n\nsix seven eight nine", encoding="utf-8")
    paras = paragraphs(tmp_path)
    assert paras == ["one two three", "four five", "six seven eight nine"]
    small, big = doc_chunks(paras, [4, 100], lambda t: len(t.split()))
    assert small.texts == ("one two three", "four five", "six seven eight nine") and small.tokens == 4
    assert big.texts == ("one two three\n\nfour five\n\nsix seven eight nine",) and big.tokens == 9
    (tmp_path / "empty").mkdir()
    with pytest.raises(CtxprobeError, match="no text found"):
        paragraphs(tmp_path / "empty")


def test_confirm_cases_share_their_draws_across_arms_and_place_ranks_by_the_order() -> None:
    assert slots(5, "edges", "start") == [0, 4, 1, 3, 2]
    assert slots(5, "edges", "end") == [4, 0, 3, 1, 2]
    assert slots(3, "any", None, reverse=True) == [2, 1, 0]
    count = lambda t: len(t.split())  # noqa: E731
    at_k = build_case(7, 4, 60, "edges", "start", count)
    at_2k = build_case(7, 4, 60, "edges", "start", count, extra=4)
    assert at_k.expected == at_2k.expected and at_2k.near_misses[:3] == at_k.near_misses
    assert (at_k.chunks, at_2k.chunks) == (4, 8)
    text = at_k.messages[0]["content"]
    assert text.count("special magic number for") == 5  # four statements and the question
    assert at_k.expected in text and at_k.answer_slot == slots(4, "edges", "start")[at_k.answer_rank - 1]


def test_bad_input_is_one_line_saying_what_to_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "r.sqlite"
    assert main(["run", "--model", "sim:perfect", "--lengths", "1k,2k", "--depths", "0,0.5,1", "--reps", "10",
                 "--store", str(store), "--no-plots", "--no-progress"]) == 0
    with Store(store) as s:
        run_id = s.list_runs()[-1].run_id
    capsys.readouterr()
    assert main(["decide", run_id, "--store", str(store), "--rag", "--use", "niah"]) != 0
    err = capsys.readouterr().err.strip()
    assert "no distractor axis" in err and "--param niah.distractors=0,1,3,10,30" in err and "\n" not in err
    assert main(["decide", run_id, "--store", str(store), "--rag"]) != 0
    assert "--use" in capsys.readouterr().err
    assert main(["decide", run_id, "--store", str(store), "--confirm"]) != 0
    assert "add --rag" in capsys.readouterr().err


def test_multihop_look_alike_chains_are_an_axis_with_its_own_tolerance(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """multihop's near-misses are its other person→organisation→city chains (``distractors``):
    ``--param multihop.distractors=0,2,4`` walks them like niah's look-alikes, and the JSON
    report carries multihop's own tolerance and curve."""
    import json

    store = tmp_path / "m.sqlite"
    assert main(["run", "--model", "sim:perfect", "--family", "multihop", "--param", "multihop.distractors=0,2,4",
                 "--lengths", "1k", "--depths", "0.5", "--reps", "24", "--store", str(store), "--no-plots",
                 "--no-progress"]) == 0
    with Store(store) as s:
        (run,) = s.list_runs()
    capsys.readouterr()
    assert main(["report", run.run_id, "--store", str(store), "--json"]) == 0
    (tol,) = json.loads(capsys.readouterr().out)["distractor_tolerance"]
    assert tol["family"] == "multihop" and [p["count"] for p in tol["curve"]] == [0, 2, 4]
    assert tol["lo"] == 4  # a perfect reader at 24 cases a count clears the bar at every count


def test_documents_has_no_look_alike_axis_and_the_error_says_what_to_run(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``documents`` takes no look-alike count (its passages are the user's own text): asking
    for one is the one-line unknown-parameter error, and decide --rag on a documents use
    points at niah's axis instead of suggesting a ``documents.distractors`` that fails."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vault.md").write_text("The access code for the north vault is Kelvor-Dane.\n", encoding="utf-8")
    (docs / "garden.txt").write_text("The head gardener of the east greenhouse is Marisol Tenby.\n", encoding="utf-8")
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"document": "vault.md", "question": "What is the access code for the north vault?", '
                  '"answer": "Kelvor-Dane"}\n', encoding="utf-8")
    store = tmp_path / "d.sqlite"
    base = ["run", "--model", "sim:perfect", "--family", "documents", "--param", f"documents.docs={docs}",
            "--param", f"documents.qa={qa}", "--lengths", "512,1k", "--depths", "0,0.5,1", "--reps", "10",
            "--store", str(store), "--no-plots", "--no-progress"]
    capsys.readouterr()
    assert main([*base, "--param", "documents.distractors=0,1"]) != 0
    err = capsys.readouterr().err.strip()
    assert "unknown parameter 'distractors' for family documents" in err and "\n" not in err
    assert main(base) == 0
    with Store(store) as s:
        run_id = s.list_runs()[-1].run_id
    capsys.readouterr()
    assert main(["decide", run_id, "--store", str(store), "--rag", "--use", "documents", "--chunks", "64"]) != 0
    err = capsys.readouterr().err.strip()
    assert "no distractor axis for documents: documents takes no look-alike count" in err, err
    assert "--family niah --param niah.distractors=0,1,3,10,30" in err and "documents.distractors" not in err
    assert "\n" not in err


def test_a_run_under_way_says_which_counts_are_not_yet_run() -> None:
    """Only the counts 0 and 1 measured of 0, 1, 3, 10 planned: the tolerance is the most
    measured so far, not "the most tested", and the unmeasured counts show on the curve."""
    families = {f"niah~distractors{c}": {"family": "niah", "distractors": c} for c in (0, 1, 3, 10)}
    rows = _rows("niah~distractors0", 40, 40) + _rows("niah~distractors1", 40, 40)
    intervals = {iv.family: iv for iv in effective_lengths(rows, threshold=0.856, draws=1)}
    (tol,) = distractor_tolerance(rows, families, intervals, {}, bar=0.856)
    assert tol.lo == 1 and tol.counts == (0, 1, 3, 10)
    assert [p.n for p in tol.curve] == [40, 40, 0, 0]
    line = tol.line()
    assert "tolerates up to 1 look-alike at" in line and "(the most measured so far: 3, 10 not yet run)" in line
    assert "the most tested" not in line and "3: —, 10: —" in line
    assert "95% interval from 1 (its upper end waits on the counts not yet run)" in line
    assert tol.to_dict()["not_run"] == [3, 10]
    # all measured: the most tested, as before
    rows += _rows("niah~distractors3", 40, 40) + _rows("niah~distractors10", 40, 40)
    (tol,) = distractor_tolerance(rows, families, intervals, {}, bar=0.856)
    assert tol.lo == 10 and "(the most tested: more were not tried)" in tol.line()
    assert "not yet run" not in tol.line() and "95% interval 10–10" in tol.line() and tol.not_run() == []
