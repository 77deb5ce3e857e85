"""The accuracy bar is a fraction in (0, 1] wherever it is taken — run, plan, report (terminal,
JSON, HTML), compare's threshold rule and the library calls behind them — and a bar outside
it is refused with one and the same line, before anything is read or sent."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from ctxprobe.analysis.bootstrap import ThresholdRule
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep
from ctxprobe.spec.threshold import check_threshold


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "s.sqlite"
    result = run_sweep(make_spec({"model": "sim:perfect", "lengths": "512", "depths": "0,1", "reps": 1}), path,
                       progress=False)
    return path, result.run_id


def _message(value: str) -> str:
    return f"threshold {float(value)!r} is outside (0, 1]: the accuracy bar is a fraction such as 0.856"


@pytest.mark.parametrize("value, ok", [("0", False), ("-0.1", False), ("1e-9", True), ("0.856", True), ("1", True),
                                       ("1.0000001", False), ("2", False), ("nan", False)])
def test_the_bar_is_in_zero_one_exclusive_inclusive(value, ok) -> None:
    if ok:
        assert check_threshold(float(value)) == float(value)
        assert make_spec({"threshold": float(value)}).threshold == float(value)
        assert ThresholdRule("absolute", float(value)).value == float(value)
    else:
        with pytest.raises(CtxprobeError) as err:
            check_threshold(float(value))
        assert str(err.value) == _message(value)
        for call in (lambda: make_spec({"threshold": float(value)}), lambda: ThresholdRule("absolute", float(value)),
                     lambda: ThresholdRule("relative", float(value))):
            with pytest.raises(CtxprobeError) as again:
                call()
            assert str(again.value) == _message(value)


def test_every_command_refuses_threshold_2_with_runs_line(stored, tmp_path) -> None:
    store, run_id = stored
    with Store(store) as s:
        before = hashlib.sha256(repr(s.db.execute("SELECT * FROM responses ORDER BY case_id").fetchall()).encode())
    commands = {
        "run": ["run", "--model", "sim:perfect", "--lengths", "512", "--threshold", "2", "--store", str(tmp_path / "x")],
        "plan": ["plan", "--model", "sim:perfect", "--lengths", "512", "--threshold", "2"],
        "report": ["report", run_id, "--threshold", "2", "--store", str(store), "--no-plots"],
        "report --json": ["report", run_id, "--threshold", "2", "--json", "--store", str(store)],
        "report --html": ["report", run_id, "--threshold", "2", "--html", str(tmp_path / "r.html"),
                          "--store", str(store)],
        "compare": ["compare", run_id, run_id, "--threshold-rule", "2", "--store", str(store)],
        "compare relative": ["compare", run_id, run_id, "--threshold-rule", "relative:2", "--store", str(store)],
    }
    for name, args in commands.items():
        proc = _cli(*args)
        assert proc.returncode != 0, name
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        assert len(lines) == 1 and _message("2") in lines[0], (name, proc.stderr)
        assert "Traceback" not in proc.stderr and "below" not in proc.stdout
    assert not (tmp_path / "x").exists() and not (tmp_path / "r.html").exists()
    with Store(store) as s:
        after = hashlib.sha256(repr(s.db.execute("SELECT * FROM responses ORDER BY case_id").fetchall()).encode())
    assert before.hexdigest() == after.hexdigest()


def test_a_perfect_model_clears_a_bar_of_one(stored) -> None:
    store, run_id = stored
    report = load_report(run_id, store, threshold=1.0)
    assert report.threshold == 1.0
    with pytest.raises(CtxprobeError, match=r"outside \(0, 1\]"):
        load_report(run_id, store, threshold=2.0)
