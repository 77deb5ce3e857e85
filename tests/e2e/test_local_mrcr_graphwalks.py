"""The embedded model (SmolLM2-135M in process) runs ``mrcr`` and ``graphwalks`` from 1K to
8K tokens with ``--baseline no-context``, and the report's all-families profile (terminal
summary, JSON, HTML) lists both families with their floors. One case a cell, short replies:
a few minutes on two cores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxprobe.store import Store, iter_export

pytestmark = pytest.mark.slow

LENGTHS = [1024, 2048, 4096, 8000]  # 8000: room for the output inside the model's 8,192-token window


def _ctxprobe(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


def test_local_model_mrcr_graphwalks_with_floor(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run = _ctxprobe("run", "--model", "local", "--family", "mrcr,graphwalks", "--param", "mrcr.reply_words=40",
                    "--param", "graphwalks.max_answer=8",
                    "--lengths", ",".join(map(str, LENGTHS)), "--depths", "0.5", "--reps", "1",
                    "--baseline", "no-context", "--store", str(store), "--no-plots", "--no-progress", cwd=tmp_path)
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

    rep = _ctxprobe("report", run_id, "--store", str(store), "--json", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    data = json.loads(rep.stdout)
    assert {p["family"] for p in data["profiles"]} == {"mrcr", "graphwalks"}
    assert all([s["length"] for s in p["lengths"]] == LENGTHS for p in data["profiles"])
    floors = data["noise_floors"]
    assert set(floors) == {"mrcr", "graphwalks"} and floors["mrcr"]["kind"] == "random-instance"
    assert all(0.5 <= x["floor_mean"] < 1.0 for x in floors["mrcr"]["lengths"])  # 2 needles: at least 1/2

    html = tmp_path / "r.html"
    out = _ctxprobe("report", run_id, "--store", str(store), "--html", str(html), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    page = html.read_text(encoding="utf-8")
    profile = page[page.index('id="profile"'):page.index('id="all-families"')]
    assert ">mrcr<" in profile and ">graphwalks<" in profile and "Noise floor" in profile
    start = page.index('id="all-families"')
    all_families = page[start:page.index('id="family-', start)]  # up to the first family's own section
    assert "every family on one chart" in all_families and "data:image/png;base64," in all_families
