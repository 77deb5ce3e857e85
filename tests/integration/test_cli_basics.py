"""--version, complete --help, and a clean exit when the reader closes the pipe."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxprobe import __version__
from ctxprobe.cli import build_parser, main
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"ctxprobe {__version__}"


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_flag_and_argument_of_every_command_has_help() -> None:
    missing = [f"{name} {action.option_strings or action.dest}"
               for name, parser in _commands().items() for action in parser._actions
               if not isinstance(action, argparse._HelpAction) and not (action.help or "").strip()]
    assert missing == []
    assert set(_commands()) >= {"run", "plan", "phonebook", "report", "runs", "export", "failures", "compare",
                                "check", "serve-sim"}


def test_every_help_fits_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal or CI log 80 wide: no help line (usage, choices, epilog) runs past it."""
    monkeypatch.setenv("COLUMNS", "80")
    texts = {"ctxprobe": build_parser().format_help()} | {n: p.format_help() for n, p in _commands().items()}
    long = [f"{name}: {line}" for name, text in texts.items() for line in text.splitlines() if len(line) > 80]
    assert long == []
    assert texts["ctxprobe"].startswith("usage: ctxprobe [-h] [--version] COMMAND ...")
    assert "--max-cost cap" in texts["ctxprobe"]  # exit 3 names every way a run is left incomplete
    # --base-url's fallbacks as the providers read them (README: vllm/ and sglang/ their own variable first)
    assert all(v in texts["run"] for v in ("$VLLM_BASE_URL", "$SGLANG_BASE_URL", "$OPENAI_BASE_URL"))


@pytest.mark.parametrize("command", sorted(_commands()))
def test_help_of_every_command_prints_and_exits_0(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert f"usage: ctxprobe {command}" in capsys.readouterr().out


def test_export_into_a_closed_pipe_exits_cleanly(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    spec = make_spec({"model": "sim:perfect", "lengths": "2k", "depths": "0,0.25,0.5,0.75,1", "reps": 4})
    run_id = run_sweep(spec, store, progress=False).run_id
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen([sys.executable, "-m", "ctxprobe.cli", "export", run_id, "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # like `| head -1`: read a line, then hang up
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.startswith(b"{")
    assert proc.returncode == 0, err
    assert err == ""  # no BrokenPipeError traceback, no "Exception ignored" line


def test_progress_label_names_the_family_and_keeps_its_width() -> None:
    from types import SimpleNamespace

    from ctxprobe.sweep.run import progress_label
    from ctxprobe.core.case import Cell

    labels = [progress_label(SimpleNamespace(cell=Cell(f, n, d)), o)  # type: ignore[arg-type]
              for f, n, d, o in [("niah", 512, 0.0, "correct"), ("aggregation_cw", 131072, 0.25, "output_truncated"),
                                 ("vartrack", 8192, 1.0, "not_found")]]
    assert labels[0].startswith("niah ") and "aggregati…" in labels[1] and "128K" in labels[1]
    assert len({len(label) for label in labels}) == 1


@pytest.mark.parametrize("width", [80, 120])
def test_the_progress_bar_never_cuts_its_counts_or_times(width: int) -> None:
    """At 80 columns (a CI log) the label drops the outcome so the counts, spend and times
    stay whole; wider, the outcome is shown too."""
    import io

    from rich.console import Console

    from ctxprobe.core.case import Case, Cell
    from ctxprobe.sweep.display import Display

    buf = io.StringIO()
    shown = Display(10000, 9990, True, Console(file=buf, width=width, force_terminal=False))
    case = Case.__new__(Case)
    object.__setattr__(case, "cell", Cell("aggregation_cw", 131072, 0.25))
    with shown.progress:
        for _ in range(10):
            shown.update(case, 1.0, "output_truncated", spent=12.3456)
    lines = [line for line in buf.getvalue().splitlines() if line.strip()]
    last = lines[-1]
    assert all(len(line) <= width for line in lines)
    assert "10000/10000" in last and "acc 1.00 $12.3456" in last and "ETA" in last
    assert last.count("0:00:") == 2 and "…" not in last.split("128K", 1)[1]  # only the family name is shortened
    assert ("output_truncated" in last) == (width >= 100)


def test_run_without_matplotlib_prints_the_report_and_a_note(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--model", "sim:perfect", "--lengths", "512", "--depths", "0,1", "--reps", "1",
                 "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "profile · bar: mean" in out and "answer: niah" in out
    assert "PNG plots skipped (pip install 'ctxprobe[plot]' for them" in out
    assert not (tmp_path / "ctxprobe-report").exists()
