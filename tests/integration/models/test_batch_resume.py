"""``ctxprobe run --batch`` killed while its batch waits, then rerun: the same batch is
polled, nothing is sent twice; Ctrl-C asks once (on a terminal) whether to cancel it."""

from __future__ import annotations

import os
import pty
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxprobe.store import Store

from fake_batch_apis import FAKES, BatchFake

SECRET = "sk-SENTINEL-batch-resume-key-91c3e7"
SDK = {"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}
WAITING = {"openai": "in_progress", "anthropic": "in_progress", "gemini": "JOB_STATE_RUNNING"}


@pytest.fixture(params=sorted(FAKES))
def fake(request: pytest.FixtureRequest) -> Iterator[BatchFake]:
    pytest.importorskip(SDK[request.param])
    cls, _, _ = FAKES[request.param]
    with cls() as server:
        server.provider = request.param  # type: ignore[attr-defined]
        yield server


def env_for(fake: BatchFake) -> dict[str, str]:
    _, key_var, url_var = FAKES[fake.provider]  # type: ignore[attr-defined]
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}
    return {**env, key_var: SECRET, url_var: fake.url + fake.suffix}


def run_args(fake: BatchFake, store: Path) -> list[str]:
    return [sys.executable, "-m", "ctxprobe.cli", "run", "--model", f"{fake.provider}:m",  # type: ignore[attr-defined]
            "--tokenizer", "local", "--lengths", "512", "--depths", "0,0.5,1", "--reps", "2", "--batch",
            "--batch-poll", "0.05", "--store", str(store), "--no-progress", "--no-plots"]


def wait_for(cond: Callable[[], bool], proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 90
    while not cond():
        assert proc.poll() is None, f"the run ended before {what}: {proc.stderr.read() if proc.stderr else ''!r}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def stored_batch_id(store: Path) -> str | None:
    try:
        db = sqlite3.connect(store)
        try:
            row = db.execute("SELECT batch_id FROM batches WHERE batch_id IS NOT NULL").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def test_kill_while_waiting_then_resume_sends_nothing_twice(fake: BatchFake, tmp_path: Path, spawn) -> None:
    store = tmp_path / "s.sqlite"
    env = env_for(fake)
    fake.hold.set()
    proc = spawn(run_args(fake, store), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: stored_batch_id(store) is not None and fake.calls["retrieve"] >= 2, proc,
                 "the batch to be created and polled")
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert fake.calls["create"] == 1
    # a wide terminal: the runs table folds a long status at narrow widths (tested on its own)
    runs = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "runs", "--store", str(store)],
                          env={**env, "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=60)
    # the status column folds a long status onto a second line
    assert "waiting 0/6" in runs.stdout and WAITING[fake.provider] in runs.stdout.replace("\n", "").replace(" ", ""), runs.stdout  # type: ignore[attr-defined]

    fake.hold.clear()
    done = subprocess.run(run_args(fake, store), env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "polling, not resending" in done.stderr
    assert fake.calls["create"] == 1 and fake.calls.get("upload", 0) <= 1  # the first batch, never resent
    assert len(fake.answered) == 6 and set(fake.answered.values()) == {1}  # each prompt answered once
    db = sqlite3.connect(store)
    rows = db.execute("SELECT outcome, COUNT(*) FROM responses GROUP BY outcome").fetchall()
    states = db.execute("SELECT state FROM batches").fetchall()
    db.close()
    assert rows == [("correct", 6)] and states == [("collected",)]
    assert SECRET.encode() not in store.read_bytes()
    with Store(store) as s:
        (run,) = s.list_runs()
    assert run.status == "complete" and run.batch is None


def test_ctrl_c_without_a_terminal_leaves_the_batch_running(tmp_path: Path, spawn) -> None:
    pytest.importorskip("openai")
    cls, _, _ = FAKES["openai"]
    with cls() as fake:
        fake.provider = "openai"  # type: ignore[attr-defined]
        fake.hold.set()
        store = tmp_path / "s.sqlite"
        proc = spawn(run_args(fake, store), env=env_for(fake), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for(lambda: fake.calls["retrieve"] >= 2, proc, "the batch to be polled")
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(proc.communicate()[1].decode()) from None
        assert proc.returncode == 130
        assert b"left 1 openai batch (batch_1) running; rerun the same command" in err
        assert fake.calls["cancel"] == 0


def test_ctrl_c_on_a_terminal_asks_and_cancels(tmp_path: Path, spawn) -> None:
    pytest.importorskip("openai")
    cls, _, _ = FAKES["openai"]
    with cls() as fake:
        fake.provider = "openai"  # type: ignore[attr-defined]
        fake.hold.set()
        store = tmp_path / "s.sqlite"
        master, slave = pty.openpty()
        proc = spawn(run_args(fake, store), env=env_for(fake), stdin=slave,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(slave)
        try:
            wait_for(lambda: fake.calls["retrieve"] >= 2, proc, "the batch to be polled")
            proc.send_signal(signal.SIGINT)
            assert proc.stderr is not None
            seen = b""
            deadline = time.monotonic() + 60
            while b"[y/N]" not in seen and time.monotonic() < deadline:
                ready, _, _ = select.select([proc.stderr], [], [], 0.5)
                if ready:
                    seen += os.read(proc.stderr.fileno(), 4096)
            assert b"cancel 1 openai batch (batch_1) at the provider? [y/N]" in seen
            os.write(master, b"y\n")
            _, rest = proc.communicate(timeout=60)
        finally:
            os.close(master)
        assert proc.returncode == 130
        assert fake.calls["cancel"] == 1 and b"cancelled 1 openai batch" in seen + rest
        db = sqlite3.connect(store)
        (status,) = db.execute("SELECT provider_status FROM batches").fetchone()
        db.close()
        assert status == "cancelled"  # polled once more after the cancel
