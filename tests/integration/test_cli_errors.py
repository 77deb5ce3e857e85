"""Bad input → one line saying what to do, exit code != 0, store intact."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys

import pytest

from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep


def _cli(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "s.sqlite"
    spec = make_spec({"model": "sim:perfect", "lengths": "512", "depths": "0,1", "reps": 1})
    result = run_sweep(spec, path, progress=False)
    return path, result.run_id


def _digest(path) -> tuple[int, str]:
    with Store(path) as store:
        rows = store.db.execute("SELECT case_id, output, outcome FROM responses ORDER BY case_id").fetchall()
    return len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bad_cases(tmp_path, store):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("model: [oops\n")
    down = f"openai-compat:m@http://127.0.0.1:{_free_port()}/v1"
    return {
        "unknown model": (["run", "--model", "nosuch:thing", "--lengths", "512", "--store", str(store)], "model"),
        "malformed yaml": (["run", str(bad_yaml), "--store", str(store)], "YAML"),
        "beyond window": (["run", "--model", "sim:perfect?ctx=2048", "--lengths", "4k", "--store", str(store)],
                          "--allow-beyond-window"),
        "below fixed parts": (["run", "--model", "sim:perfect", "--lengths", "20", "--store", str(store)],
                              "at least"),
        "bad depth": (["run", "--model", "sim:perfect", "--depths", "0,1.5", "--store", str(store)], "[0, 1]"),
        # where a server's URL comes from: --base-url, a variable, or after @ in --model
        "server down": (["run", "--model", down, "--tokenizer", "local", "--lengths", "512", "--store", str(store)],
                        "fix its URL (--base-url"),
        "plan: mistyped family": (["plan", "--model", "sim:perfect", "--family", "naih", "--lengths", "1k"],
                                  "did you mean 'niah'"),
        "plan: unknown parameter": (["plan", "--model", "sim:perfect", "--param", "niah.distractor=3",
                                     "--lengths", "1k"], "unknown parameter 'distractor'"),
        "unknown run": (["report", "zzzz", "--store", str(store)], "ctxprobe runs"),
    }


def test_bad_input_one_line_and_store_intact(tmp_path, filled_store) -> None:
    store, _ = filled_store
    before = _digest(store)
    for name, (args, fragment) in _bad_cases(tmp_path, store).items():
        proc = _cli(*args)
        assert proc.returncode != 0, name
        err = proc.stderr.strip()
        assert len(err.splitlines()) == 1, f"{name}: {err!r}"
        assert "Traceback" not in err and fragment in err, f"{name}: {err!r}"
    assert _digest(store) == before


def test_unwritable_store(tmp_path) -> None:
    proc = _cli("run", "--model", "sim:perfect", "--lengths", "512", "--store", str(tmp_path / "no" / "dir" / "x.sqlite"))
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1 and "--store" in proc.stderr


def test_read_commands_need_an_existing_store(tmp_path) -> None:
    proc = _cli("runs", "--store", str(tmp_path / "none.sqlite"))
    assert proc.returncode != 0 and "no store" in proc.stderr
    assert not (tmp_path / "none.sqlite").exists()


def test_runs_report_export_json(tmp_path, filled_store) -> None:
    import json

    store, run_id = filled_store
    runs = json.loads(_cli("runs", "--json", "--store", str(store)).stdout)
    assert [r["run_id"] for r in runs] == [run_id]
    rep = json.loads(_cli("report", run_id[:6], "--json", "--store", str(store)).stdout)
    assert rep["run_id"] == run_id and rep["profiles"][0]["effective_length"] == 512
    lines = _cli("export", run_id, "--jsonl", "--store", str(store)).stdout.splitlines()
    assert len(lines) == 2
    rec = json.loads(lines[0])
    assert {"messages", "expected", "token_count", "depth", "output", "outcome"} <= set(rec)
    text = _cli("report", run_id, "--store", str(store), "--out", str(tmp_path / "plots")).stdout
    assert "profile · bar: mean" in text and "answer: niah" in text  # the default report: the answer
    assert (tmp_path / "plots" / run_id / "niah-heatmap.png").stat().st_size > 1000
