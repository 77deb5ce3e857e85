"""Ctrl-C on the embedded model: the in-flight llama.cpp request stops (dropped at the
server's next prompt step),
nothing partial is stored, and the rerun resumes. Real model, so marked slow; how fast
the exit is, is measured by benchmarks/bench_interrupt.py (no timing assertions here)."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

pytestmark = pytest.mark.slow


def test_cancelling_a_request_stops_the_prefill_part_way_and_the_model_stays_usable() -> None:
    tok = resolve_tokenizer("local")
    case = make_family("niah", BuildContext(tok, None)).generate(Cell("niah", 6000, 0.5), 0, seed=1,
                                                                 params=validate_params("niah", {}))
    ids = case.prompt_ids
    assert ids is not None and len(ids) > 5000
    provider = resolve_provider("local", tok)

    async def scenario() -> str:
        task = asyncio.create_task(provider.generate(GenerateRequest(case.messages, max_tokens=8, prompt_ids=ids)))
        while provider._current_abort is None:  # the worker thread is inside llama.cpp
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # wait for the worker thread to leave llama.cpp (it holds the provider's lock until then)
        released = threading.Event()
        threading.Thread(target=lambda: (provider._lock.acquire(), provider._lock.release(), released.set())).start()
        while not released.is_set():
            await asyncio.sleep(0.02)
        computed = provider.last_progress.get("processed", 0)  # llama.cpp's own prompt progress
        assert computed < len(ids), "the prefill ran to the end: the abort did not reach llama.cpp"
        # the model is usable afterwards: a short request completes normally
        short = [{"role": "user", "content": "Say hello."}]
        out = await provider.generate(GenerateRequest(short, max_tokens=8))
        await provider.aclose()
        return out.text

    after_abort = asyncio.run(scenario())

    async def fresh() -> str:  # the same short request on a model that never saw an abort
        other = resolve_provider("local", tok)
        out = await other.generate(GenerateRequest([{"role": "user", "content": "Say hello."}], max_tokens=8))
        await other.aclose()
        return out.text

    assert after_abort == asyncio.run(fresh())  # greedy: an aborted prefill left no trace behind


def _responses(store: Path) -> dict[str, str]:
    try:
        with sqlite3.connect(store) as db:
            return dict(db.execute("SELECT case_id, output FROM responses").fetchall())
    except sqlite3.Error:
        return {}


def _status(store: Path) -> str | None:
    try:
        with sqlite3.connect(store) as db:
            row = db.execute("SELECT status FROM runs").fetchone()
            return row[0] if row else None
    except sqlite3.Error:
        return None


#: ``python -c`` entry that runs the CLI with the provider marking (a file, the event the
#: test waits for) the moment a generation starts: no guess of how long loading takes.
_MARKED_CLI = """
import os, pathlib, sys
import ctxprobe.providers.llamacpp.engine as m
original = m.LlamaCppProvider._generate_sync
def marked(self, *args, **kwargs):
    pathlib.Path(os.environ["CTXPROBE_TEST_STARTED"]).touch()
    return original(self, *args, **kwargs)
m.LlamaCppProvider._generate_sync = marked
from ctxprobe.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigint_stops_an_in_process_sweep_and_the_rerun_resumes(tmp_path, spawn) -> None:
    store = tmp_path / "s.sqlite"
    started = tmp_path / "generation-started"
    env = {**os.environ, "PYTHONPATH": str(Path(ctxprobe.__file__).parents[1]), "CTXPROBE_TEST_STARTED": str(started)}
    cli = ["run", "--model", "local", "--lengths", "2k", "--depths", "0.5,1",
           "--reps", "1", "--max-tokens", "16", "--store", str(store), "--no-progress", "--no-plots",
           "--out", str(tmp_path / "report")]
    args = [sys.executable, "-c", _MARKED_CLI, *cli]
    # SIGINT at its default (a child of a background shell would inherit it ignored); killed at the end
    proc = spawn(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120  # a guard against a hang, not a measurement
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    # the first generation has started (the event) and not finished (nothing stored): checked, not assumed
    assert started.exists() and proc.poll() is None and not _responses(store)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)  # a guard, not a measurement
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert _responses(store) == {}  # the interrupted generation left nothing behind
    assert _status(store) == "incomplete"
    done = subprocess.run([sys.executable, "-m", "ctxprobe.cli", *cli], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert len(_responses(store)) == 2 and _status(store) == "complete"
