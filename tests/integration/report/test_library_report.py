"""The Python API gives what the CLI shows: ``ctxprobe.load_report`` plus
``ctxprobe.print_report`` print, byte for byte, what ``ctxprobe report`` prints for a real
sim run (tables, intervals, notes, the plots it wrote)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

import ctxprobe

SRC = str(Path(__file__).resolve().parents[3] / "src")
WIDTH = 100


def _cli(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE",
                                                            "TTY_INTERACTIVE")}
    env |= {"PYTHONPATH": SRC, "COLUMNS": str(WIDTH)}
    proc = subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8")


def _library(report: object, **kwargs: object) -> str:
    buf = io.StringIO()
    ctxprobe.print_report(report, Console(file=buf, width=WIDTH), **kwargs)
    return buf.getvalue()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    store = tmp_path_factory.mktemp("lib") / "s.sqlite"
    spec = ctxprobe.make_spec({"model": "sim:blind-middle", "families": {"niah": {}, "vartrack": {}},
                               "lengths": "1k,2k,4k", "depths": "0,0.5,1", "reps": 2})
    return ctxprobe.run_sweep(spec, store, progress=False).run_id, store


def test_load_report_and_print_report_print_what_the_command_prints(run: tuple[str, Path]) -> None:
    run_id, store = run
    shown = _cli("report", run_id, "--store", str(store), "--no-plots")
    printed = _library(ctxprobe.load_report(run_id, store), plots=False)
    assert printed == shown
    assert f"run {run_id}" in shown and "profile · bar: mean" in shown  # the answer: two families in one table
    details = _cli("report", run_id, "--store", str(store), "--no-plots", "--details")
    assert _library(ctxprobe.load_report(run_id, store), plots=False, details=True) == details
    assert "profile (bar: mean" in details  # the whole report, two families summarised


def test_the_same_with_plots_and_another_bar(run: tuple[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    run_id, store = run
    out = tmp_path / "png"
    shown = _cli("report", run_id, "--store", str(store), "--out", str(out), "--threshold", "0.5")
    printed = _library(ctxprobe.load_report(run_id, store, 0.5), out_dir=out)
    assert printed == shown
    # the path wraps at the report's width (longer under pytest-xdist: a folder per worker)
    assert f"PNG plots to {out / run_id}" in shown.replace("\n", "") and (out / run_id / "niah-curve.png").is_file()


def test_report_json_is_what_report_json_prints(run: tuple[str, Path]) -> None:
    import json

    from ctxprobe.report.load import report_json

    run_id, store = run
    assert json.loads(_cli("report", run_id, "--store", str(store), "--json")) == report_json([run_id], store)
