"""decide --rag --confirm's results kept in the run's store: shown beside the same setting by
decide --rag (without --confirm), report and view; the sim's truth decides what they say
(held at k with a drop at 2k for 128-token chunks, not held for 1K chunks whose one chunk
puts the answer in the sim's sagging middle). Every confirmation is a new row; a setting
derived differently (another k) shows none; an older store opens with its runs intact."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.decide.rag import Budgets, Order, RagSetting
from ctxprobe.decide.rag_confirm import Arm, Confirmation
from ctxprobe.report.rag_confirmed import stored_confirmation_line
from ctxprobe.store import Store

from decide_sims import RAG_SAG, copy_store

SIM = RAG_SAG
CLIFF, TOLERANCE = 3000, 5
pytestmark = pytest.mark.xdist_group("rag-sims")  # the session's sag sweep, built once


@pytest.fixture(scope="module")
def run(rag_sag_run: tuple[Path, str]) -> tuple[Path, str]:
    """The session's sag sweep (tests/integration/decide/conftest.py); each test copies it."""
    return rag_sag_run


_copy = copy_store


def _decide(store: Path, run_id: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    capsys.readouterr()
    assert main(["decide", run_id, "--store", str(store), "--rag", "--use", "niah", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_confirmation_is_stored_and_shown_beside_its_setting(run: tuple[Path, str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id = _copy(run[0], tmp_path / "s.sqlite"), run[1]
    fresh = _decide(store, run_id, capsys, "--chunks", "128,1k", "--confirm", "--confirm-reps", "40")
    assert fresh["confirmed"] == []  # a confirming command shows its own results, not stored ones
    by_size = {c["chunk_tokens"]: c for c in fresh["confirm"]}
    # the truth: 4 x 128-token chunks hold; 8 of them carry 7 look-alikes > 5 tolerated: a drop at 2k;
    # one 1K chunk puts its statement mid-prompt where the sim misses 30%: below the bar 0.7
    assert by_size[128]["held"] and by_size[128]["at_2k"]["drop_shown"]
    assert 2 * by_size[128]["k"] - 1 > TOLERANCE
    assert not by_size[1024]["held"] and by_size[1024]["k"] == 1
    with Store(store) as s:
        rows = s.rag_confirmations(run_id)
    assert [(r["chunk_tokens"], r["held"]) for r in rows] == [(128, True), (1024, False)]
    assert all(len(r["scores"][arm]) == 40 for r in rows for arm in ("k", "2k", "reversed"))
    assert sum(rows[0]["scores"]["k"]) == by_size[128]["hits"]

    again = _decide(store, run_id, capsys, "--chunks", "128,512,1k")
    assert again["confirm"] == []
    shown = {r["chunk_tokens"]: r for r in again["confirmed"]}
    assert set(shown) == {128, 1024}  # 512 was never confirmed
    for size, r in shown.items():
        assert r["result"] == {k: v for k, v in by_size[size].items() if k != "line"}
        assert r["line"].startswith(f"confirmed on run {run_id} (")
        verdict = re.search(r"k = \d+: (NOT HELD|HELD) \(", r["line"]).group(1)
        assert verdict == ("HELD" if by_size[size]["held"] else "NOT HELD")

    capsys.readouterr()
    assert main(["decide", run_id, "--store", str(store), "--rag", "--use", "niah", "--chunks", "128,512,1k"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    # each stored line sits right under its own setting's line, and only there
    for size in (128, 1024):
        assert re.search(rf"{size:,}-token chunks: retrieve k = \d+ \([^)]*\) confirmed on run {run_id} "
                         rf"\([^)]*\): {size:,}-token chunks, k = ", flat), size
    assert re.search(r"512-token chunks: retrieve k = \d+ \([^)]*\) 1,024-token chunks", flat)
    capsys.readouterr()
    assert main(["report", run_id, "--store", str(store), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [(r["chunk_tokens"], r["held"], r["result"]["hits"]) for r in rep["rag_confirmations"]] == [
        (128, True, by_size[128]["hits"]), (1024, False, by_size[1024]["hits"])]
    assert sum("retrieval setting confirmed on run" in n for n in rep["notes"]) == 2
    capsys.readouterr()
    assert main(["report", run_id, "--store", str(store), "--no-plots"]) == 0
    assert " ".join(capsys.readouterr().out.split()).count("retrieval setting confirmed on run") == 2


def test_view_shows_the_stored_confirmation(run: tuple[Path, str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    import html

    from starlette.testclient import TestClient

    from ctxprobe.view.app import make_app

    store, run_id = _copy(run[0], tmp_path / "v.sqlite"), run[1]
    client = TestClient(make_app(store))
    url = f"/decide/rag?run={run_id}&use=niah&chunks=128"
    assert "confirmed earlier" not in client.get(url).text
    fresh = _decide(store, run_id, capsys, "--chunks", "128", "--confirm", "--confirm-reps", "20")["confirm"][0]
    page = html.unescape(TestClient(make_app(store)).get(url).text)
    assert "confirmed earlier" in page and f"confirmed on run {run_id}" in page
    assert f"HELD ({fresh['hits']}/20 = {fresh['accuracy']:.2f}" in page


def test_only_the_same_setting_shows_it_and_the_latest_wins(run: tuple[Path, str], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """At the exact fit (2,048 = 48 + 4 x 500) k is 4; one more instruction token makes it 3:
    a confirmation of k = 4 is not shown beside k = 3. A second confirmation adds a row."""
    store, run_id = _copy(run[0], tmp_path / "b.sqlite"), run[1]
    zero = ("--question-tokens", "0", "--answer-tokens", "0", "--chunks", "500")
    first = _decide(store, run_id, capsys, "--instruction-tokens", "48", *zero, "--confirm", "--confirm-reps", "10")
    second = _decide(store, run_id, capsys, "--instruction-tokens", "48", *zero, "--confirm", "--confirm-reps", "20")
    assert first["confirm"][0]["k"] == second["confirm"][0]["k"] == 4
    with Store(store) as s:
        assert [r["result"]["n"] for r in s.rag_confirmations(run_id)] == [10, 20]  # nothing replaced
    fits = _decide(store, run_id, capsys, "--instruction-tokens", "48", *zero)
    over = _decide(store, run_id, capsys, "--instruction-tokens", "49", *zero)
    assert (fits["rag"][0]["k"], over["rag"][0]["k"]) == (4, 3)
    assert [r["result"]["n"] for r in fits["confirmed"]] == [20]  # the latest
    assert over["confirmed"] == []


def test_a_bad_confirm_is_one_line_and_stores_nothing(run: tuple[Path, str], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id = _copy(run[0], tmp_path / "e.sqlite"), run[1]
    capsys.readouterr()
    assert main(["decide", run_id, "--store", str(store), "--rag", "--use", "niah", "--chunks", "128",
                 "--confirm", "--confirm-reps", "0"]) != 0
    err = capsys.readouterr().err.strip()
    assert "--confirm-reps must be 1 or more" in err and "\n" not in err
    with Store(store) as s:
        assert s.rag_confirmations(run_id) == []


def test_an_older_store_opens_with_its_runs_intact(run: tuple[Path, str], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A store written before confirmations were stored (no table, no m008 row) is upgraded
    on open; its cases and responses are all still there, and a confirmation then lands."""
    old, run_id = _copy(run[0], tmp_path / "old.sqlite"), run[1]
    with sqlite3.connect(old) as db:
        db.execute("DROP TABLE rag_confirmations")
        db.execute("DELETE FROM _migrations WHERE name='m008_rag_confirmations'")
        before = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "cases", "responses")]
    assert _decide(old, run_id, capsys, "--chunks", "128")["confirmed"] == []
    with sqlite3.connect(old) as db:
        after = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "cases", "responses")]
        assert db.execute("SELECT 1 FROM _migrations WHERE name='m008_rag_confirmations'").fetchone()
    assert after == before and before[1] > 0
    _decide(old, run_id, capsys, "--chunks", "128", "--confirm", "--confirm-reps", "5")
    assert len(_decide(old, run_id, capsys, "--chunks", "128")["confirmed"]) == 1


def _conf(hits: int, n: int, bar: float) -> Confirmation:
    order = Order("any", None, "niah", 2048)
    setting = RagSetting("r1", "m", "niah", 128, 128, 4, 14, 4, "distractors", order, (), Budgets())
    k = Arm("k", 4, tuple([True] * hits + [False] * (n - hits)))
    return Confirmation(setting, bar, k, Arm("2k", 8, k.scores), Arm("reversed", 4, k.scores))


@pytest.mark.parametrize(("n", "held"), [(24, True), (23, False)])
def test_the_stored_verdict_at_the_bar(tmp_path: Path, n: int, held: bool) -> None:
    """All n cases right clear the bar 0.856 with 95% confidence from 24 on
    (0.025^(1/24) >= 0.856 > 0.025^(1/23)): the stored row and its line say the same."""
    c = _conf(n, n, 0.856)
    assert c.held is held
    with Store(tmp_path / "t.sqlite") as s:
        s.ensure_run("r1", model="m", tokenizer="t", family="niah", version="0", spec={}, meta={})
        s.save_rag_confirmation(c.stored_row("filler"))
        (row,) = s.rag_confirmations("r1")
    assert row["held"] is held and row["result"]["held"] is held
    line = stored_confirmation_line(row)
    assert re.search(r"k = 4: (NOT )?HELD", line).group(1) == (None if held else "NOT ")
    assert line.split("): ", 1)[1] == c.line().removeprefix("confirm ")
