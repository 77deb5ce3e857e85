"""The embedded model (SmolLM2-135M in process) runs ``mrcr`` and ``graphwalks`` at 1K and
2K tokens with ``--baseline no-context``, and the report's all-families profile (terminal
summary, JSON, HTML) lists both families with their floors. One case a cell, short replies.
(Lengths up to the model's window are refused or accepted by tests/*/test_trained_window.py.)"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.store import Store, iter_export

pytestmark = pytest.mark.slow

LENGTHS = [1024, 2048]


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def _ctxprobe(*args: str, capsys: pytest.CaptureFixture[str]) -> Done:
    """``ctxprobe ARGS`` in process (the CLI's ``main``), with what it printed."""
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return Done(code, out.out, out.err)


def test_local_model_mrcr_graphwalks_with_floor(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "s.sqlite"
    run = _ctxprobe("run", "--details", "--model", "local", "--family", "mrcr,graphwalks", "--param", "mrcr.reply_words=40",
                    "--param", "graphwalks.max_answer=8",
                    "--lengths", ",".join(map(str, LENGTHS)), "--depths", "0.5", "--reps", "1",
                    "--baseline", "no-context", "--store", str(store), "--no-plots", "--no-progress", capsys=capsys)
    assert run.returncode == 0, run.stderr + run.stdout[-3000:]
    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
    recs = list(iter_export(run_id, store))
    # mrcr's floor is computed (nothing sent); graphwalks sends its evidence-free twin
    assert sorted({r["family"] for r in recs}) == ["graphwalks", "graphwalks@no-context", "mrcr"]
    assert len(recs) == 3 * len(LENGTHS)
    for r in recs:
        assert r["outcome"] not in (None, "error", "input_truncated"), r
        assert r["token_count"] <= r["length"] and r["reported_prompt_tokens"] == r["token_count"]
    # the summary table of the terminal report: the profile of every family, the floor column
    assert "profile (bar" in run.stdout and "above floor" in run.stdout
    summary = run.stdout[run.stdout.index("profile (bar"):]
    assert "mrcr" in summary[:2000] and "graphwalks" in summary[:2000]
    assert "mrcr: noise floor" in run.stdout and "graphwalks: noise floor" in run.stdout

    rep = _ctxprobe("report", run_id, "--store", str(store), "--json", capsys=capsys)
    assert rep.returncode == 0, rep.stderr
    data = json.loads(rep.stdout)
    assert {p["family"] for p in data["profiles"]} == {"mrcr", "graphwalks"}
    assert all([s["length"] for s in p["lengths"]] == LENGTHS for p in data["profiles"])
    floors = data["noise_floors"]
    assert set(floors) == {"mrcr", "graphwalks"} and floors["mrcr"]["kind"] == "random-instance"
    assert all(0.5 <= x["floor_mean"] < 1.0 for x in floors["mrcr"]["lengths"])  # 2 needles: at least 1/2

    html = tmp_path / "r.html"
    out = _ctxprobe("report", run_id, "--store", str(store), "--html", str(html), capsys=capsys)
    assert out.returncode == 0, out.stderr
    page = html.read_text(encoding="utf-8")
    profile = page[page.index('id="profile"'):page.index('id="all-families"')]
    assert ">mrcr<" in profile and ">graphwalks<" in profile and "Noise floor" in profile
    start = page.index('id="all-families"')
    all_families = page[start:page.index('id="family-', start)]  # up to the first family's own section
    assert "every family on one chart" in all_families and "data:image/png;base64," in all_families
