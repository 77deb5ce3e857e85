"""`ctxprobe compare`, `check` and `run --adaptive` through the command line."""

from __future__ import annotations

import json
import subprocess
import sys

from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True, timeout=300)


def test_check_gate_exit_codes_and_compare(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    base = {"lengths": "512,1k", "depths": "0,0.5,1", "reps": 6, "families": {"niah": {"distractors": 2}}}
    good = run_sweep(make_spec({**base, "model": "sim:perfect"}), store, progress=False).run_id
    bad = run_sweep(make_spec({**base, "model": "sim:blind-middle"}), store, progress=False).run_id
    same = _cli("check", good, "--baseline", good, "--store", str(store))
    # 36 pairs, 9 tests: a test needs 9 lost pairs, a drop of 0.25: blind to --max-drop 0.05
    assert same.returncode == 4 and same.stdout.startswith("INCONCLUSIVE"), same.stdout + same.stderr
    wide = _cli("check", good, "--baseline", good, "--store", str(store), "--max-drop", "0.25")
    assert wide.returncode == 0 and wide.stdout.startswith("PASS"), wide.stdout + wide.stderr
    worse = _cli("check", bad, "--baseline", good, "--store", str(store))
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "niah" in worse.stdout  # the responsible cells (here: the family pooled) are printed
    cmp = _cli("compare", good[:4], bad[:5], "--store", str(store))  # prefixes in, full ids out
    assert cmp.returncode == 0 and "McNemar" in cmp.stdout
    assert f"niah: {good} (A) vs {bad} (B)" in " ".join(cmp.stdout.split())


def test_adaptive_run_from_cli(tmp_path) -> None:
    store = tmp_path / "a.sqlite"
    proc = _cli("run", "--model", "sim:decay?cliff=1500&width=100", "--lengths", "512,1k,2k,4k", "--reps", "10",
                "--adaptive", "--store", str(store), "--no-progress", "--no-plots")
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(_cli("runs", "--json", "--store", str(store)).stdout)
    assert len(runs) == 1 and runs[0]["responses"] < 4 * 5 * 10  # fewer cases than the full grid
    rep = json.loads(_cli("report", runs[0]["run_id"], "--json", "--store", str(store)).stdout)
    assert rep["profiles"][0]["effective_length"] == 1024


def test_phonebook_command(tmp_path) -> None:
    proc = _cli("phonebook", "--model", "sim:perfect", "--entries", "100,200", "--needles", "5,10", "--runs", "2",
                "--store", str(tmp_path / "pb.sqlite"), "--out", str(tmp_path / "out"), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "LCRDS" in proc.stdout and "100.0" in proc.stdout
    assert list((tmp_path / "out").glob("phonebook-*-position.png"))
    runs = json.loads(_cli("runs", "--json", "--store", str(tmp_path / "pb.sqlite")).stdout)
    again = _cli("report", runs[0]["run_id"], "--store", str(tmp_path / "pb.sqlite"), "--no-plots")
    assert again.returncode == 0 and "MUC" in again.stdout
