"""decide --rag on sims of stated effective length, distractor tolerance and middle sag
(sim:rag): the depth k per chunk size within one grid step of the truth, the right bound,
the right order; --confirm holds at k, with a paired drop at 2k exactly where the truth
says the longer prompt breaks the sim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.cli import main

from decide_sims import RAG_SAG, copy_store, rag_sweep

pytestmark = pytest.mark.xdist_group("rag-sims")  # the session's sag sweep, built once

LENGTHS = (1024, 2048, 4096)
COUNTS = (0, 1, 3, 10)
FIXED = 200  # the default instruction, question and answer budgets
#: name → (sim, its truth: cliff, tolerance, sag, late)
SIMS = {"sag": (RAG_SAG, 3000, 5, 0.3, 0.15),
        "flat": ("sim:rag?cliff=100000&tolerance=30", 100000, 30, 0.0, 0.0)}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, rag_sag_run: tuple[Path, str]) -> tuple[Path, dict[str, str]]:
    # the session's sag sweep (shared with test_rag_stored.py), copied: --confirm stores here
    path = copy_store(rag_sag_run[0], tmp_path_factory.mktemp("rag") / "runs.sqlite")
    ids = {"sag": rag_sag_run[1], "flat": rag_sweep(path, SIMS["flat"][0])}
    return path, ids


def _rag(store: Path, run_id: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    capsys.readouterr()
    assert main(["decide", run_id, "--store", str(store), "--rag", "--use", "niah", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", list(SIMS))
def test_k_bound_and_order_recover_the_truth(store: tuple[Path, dict[str, str]], name: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path, ids = store
    _, cliff, tolerance, sag, late = SIMS[name]
    out = _rag(path, ids[name], capsys, "--chunks", "128,512,1k")
    reliable = max(L for L in LENGTHS if L <= cliff)  # the grid's truth: the longest tested length it answers at
    tol_grid = max(c for c in COUNTS if c <= tolerance)  # the most tested look-alikes it tolerates
    for s in out["rag"]:
        k_len = (reliable - FIXED) // s["chunk_tokens"]
        # the truth in k of the tolerance lies between the grid step below it and itself
        assert tol_grid + 1 <= s["k_distractors"] <= tolerance + 1
        assert s["k_length"] == k_len
        assert s["k"] == min(k_len, s["k_distractors"])
        want = "length" if k_len < tol_grid + 1 else "distractors" if k_len > tol_grid + 1 else "both"
        assert s["bound_by"] == want
        assert s["order"] == ("edges" if sag > 0 else "any")
        if sag:
            assert s["first_edge"] == ("start" if late > 0 else s["first_edge"])
        kinds = {e["bound"] for e in s["evidence"]}
        assert kinds == {"length", "distractors", "order"}
        assert all(e["run_id"] == ids[name] for e in s["evidence"])


def test_confirm_holds_at_k_and_drops_at_2k_only_where_the_truth_breaks(
        store: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    path, ids = store
    for name in SIMS:
        _, cliff, tolerance, _sag, _late = SIMS[name]
        out = _rag(path, ids[name], capsys, "--chunks", "128,512", "--confirm", "--confirm-reps", "40")
        assert out["confirm"], out
        for c in out["confirm"]:
            assert c["held"], c["line"]
            k2 = c["at_2k"]["k"]
            assert k2 == 2 * c["k"]
            # the 2k prompt (about k2 chunks + the instruction and question) breaks the sim when it holds
            # more look-alikes than it tolerates or more tokens than its cliff
            breaks = k2 - 1 > tolerance or k2 * c["chunk_tokens"] + 100 > cliff
            assert c["at_2k"]["drop_shown"] == breaks, c["line"]


def test_a_bound_shifts_with_the_budgets_at_the_exact_fit(store: tuple[Path, dict[str, str]],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The assembled prompt may equal the reliable length, never pass it: 2,048 = 48 + 4 x 500."""
    path, ids = store
    zero = ("--question-tokens", "0", "--answer-tokens", "0", "--chunks", "500")
    fits = _rag(path, ids["sag"], capsys, "--instruction-tokens", "48", *zero)["rag"][0]
    over = _rag(path, ids["sag"], capsys, "--instruction-tokens", "49", *zero)["rag"][0]
    assert (fits["k_length"], over["k_length"]) == (4, 3)


def test_chunks_past_the_reliable_length_say_the_largest_that_fits(store: tuple[Path, dict[str, str]],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path, ids = store
    capsys.readouterr()
    assert main(["decide", ids["sag"], "--store", str(path), "--rag", "--use", "niah", "--chunks", "4k"]) != 0
    err = capsys.readouterr().err.strip()
    assert f"use --chunks of at most {2048 - FIXED:,} tokens" in err and "\n" not in err


def test_report_and_html_carry_the_tolerance(store: tuple[Path, dict[str, str]], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path, ids = store
    capsys.readouterr()
    assert main(["report", ids["sag"], "--store", str(path), "--json"]) == 0
    (tol,) = json.loads(capsys.readouterr().out)["distractor_tolerance"]
    assert tol["lo"] == max(c for c in COUNTS if c <= SIMS["sag"][2])
    assert [p["count"] for p in tol["curve"]] == list(COUNTS)
    page = tmp_path / "rag.html"
    assert main(["decide", ids["sag"], "--store", str(path), "--rag", "--use", "niah", "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "retrieval depth per chunk size" in text and "sim:rag?cliff=3000&amp;tolerance=5" in text


def test_view_shows_the_settings_decide_prints(store: tuple[Path, dict[str, str]],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``view``'s /decide/rag page holds the same k, bound and order per chunk size as
    ``decide --rag --json``, the model name escaped; bad input is a one-line page."""
    import html

    from starlette.testclient import TestClient

    from ctxprobe.view.app import make_app

    path, ids = store
    want = _rag(path, ids["sag"], capsys, "--chunks", "128,512", "--answer-tokens", "60")["rag"]
    client = TestClient(make_app(path))
    page = client.get(f"/decide/rag?run={ids['sag']}&use=niah&chunks=128,512&answer=60")
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert "retrieval depth per chunk size" in text and "sim:rag?cliff=3000&amp;tolerance=5" in page.text
    cells = [html.unescape(c) for c in __import__("re").findall(r"<td[^>]*>(.*?)</td>", page.text)]
    for s in want:
        row = cells.index(f"{s['chunk_tokens']:,}")
        assert cells[row + 1] == str(s["k"]) and cells[row + 2] == s["bound_by"]
    no_use = client.get(f"/decide/rag?run={ids['sag']}")
    assert no_use.status_code == 404 and "needs --use FAMILIES" in no_use.text
    bad = client.get(f"/decide/rag?run={ids['sag']}&use=niah&answer=-1")
    assert bad.status_code == 404 and "0 or more" in bad.text
