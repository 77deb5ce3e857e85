"""End to end through the CLI: ``ctxprobe run --model sim:perfect --family mrcr,graphwalks``
then ``ctxprobe report``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ctxprobe.store import iter_export

pytestmark = pytest.mark.slow


def _ctxprobe(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_run_and_report(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    out = _ctxprobe("run", "--model", "sim:perfect", "--family", "mrcr,graphwalks", "--tokenizer", "local",
                    "--lengths", "2k,4k", "--depths", "0,0.5,1", "--reps", "2", "--store", str(store),
                    "--no-plots", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    from ctxprobe.store import Store

    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
    rep = _ctxprobe("report", run_id, "--store", str(store), "--json", "--no-plots", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    data = json.loads(rep.stdout)
    assert "mrcr" in rep.stdout and "graphwalks" in rep.stdout and data
    recs = list(iter_export(run_id, store))
    assert {r["family"] for r in recs} == {"mrcr", "graphwalks"} and len(recs) == 24
    assert all(r["score"] == 1.0 and r["outcome"] == "correct" for r in recs)
    for r in recs:
        assert r["token_count"] <= r["length"]
        if r["family"] == "mrcr":
            assert r["detail"]["openai"] == 1.0 and r["detail"]["last_occurrence"] == 1.0
