"""SIGKILL a sweep half way, rerun: no stored response lost, no stored case sent again."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from ctxprobe.models import resolve_provider
from ctxprobe.sim.server import SimServer
from ctxprobe.store import iter_export
from ctxprobe.store import Store
from ctxprobe.core.case import prompt_hash
from ctxprobe.tokenizers import resolve_tokenizer


def _stored(path) -> dict[str, str]:
    try:
        db = sqlite3.connect(path)
        rows = db.execute("SELECT case_id, output FROM responses").fetchall()
        db.close()
    except sqlite3.Error:
        return {}
    return dict(rows)


def test_sigkill_then_resume(tmp_path, case_requests, spawn) -> None:
    store = tmp_path / "s.sqlite"
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect?latency=0.15", tok), tok) as server:
        url = server.start()
        args = [sys.executable, "-m", "ctxprobe.cli", "run", "--model", f"openai-compat:sim@{url}",
                "--tokenizer", "local", "--lengths", "512,1k", "--depths", "0,0.25,0.5,0.75,1", "--reps", "4",
                "--concurrency", "2", "--store", str(store), "--no-progress", "--no-plots"]
        proc = spawn(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(_stored(store)) < 12 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        before = _stored(store)
        assert 12 <= len(before) < 40, "the kill should land half way"
        # no process holds the run any more: it shows as interrupted, counted against the plan
        (run_id,) = sqlite3.connect(store).execute("SELECT run_id FROM runs").fetchone()
        with Store(store) as s:
            killed = s.get_run(run_id)
        assert killed.status == "interrupted" and killed.n_planned == 40 and killed.n_final == len(before)
        assert killed.n_cases < 40

        done = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        after = _stored(store)

        # nothing stored was lost or changed
        assert all(after[k] == v for k, v in before.items())
        assert len(after) == 40
        # no stored case was sent again: every prompt stored before the kill was served once
        (run_id,) = sqlite3.connect(store).execute("SELECT run_id FROM runs").fetchone()
        records = {r["case_id"]: r for r in iter_export(run_id, store)}
        for case_id in before:
            assert server.prompt_counts[prompt_hash(records[case_id]["messages"])] == 1, case_id
        # at most the requests in flight at the kill (concurrency 2) were sent twice
        assert case_requests(server) <= 40 + 2


def test_ctrl_c_stops_gracefully_and_resumes(tmp_path, spawn) -> None:
    store = tmp_path / "c.sqlite"
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect?latency=0.15", tok), tok) as server:
        url = server.start()
        args = [sys.executable, "-m", "ctxprobe.cli", "run", "--model", f"openai-compat:sim@{url}",
                "--tokenizer", "local", "--lengths", "512,1k", "--reps", "4", "--concurrency", "2",
                "--store", str(store), "--no-progress", "--no-plots"]
        proc = spawn(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(_stored(store)) < 8 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert "interrupted" in err and "Traceback" not in err
        before = _stored(store)
        assert 8 <= len(before) < 40
        status = sqlite3.connect(store).execute("SELECT status FROM runs").fetchone()[0]
        assert status == "incomplete"
        done = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        after = _stored(store)
        assert len(after) == 40 and all(after[k] == v for k, v in before.items())
