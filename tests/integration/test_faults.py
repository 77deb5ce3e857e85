"""A sweep through a fault-injecting OpenAI-compatible server on loopback.

Every case must end with the right label, no response may be lost, truncation must be
flagged every time, and nothing the model never saw may be scored as its miss."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from ctxprobe.models import resolve_provider
from ctxprobe.sim.faults import FaultPlan
from ctxprobe.sim.server import SimServer, _messages_hash
from ctxprobe.store import iter_export
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

RATES = {"429": 0.1, "500": 0.08, "503": 0.08, "drop": 0.08, "hang": 0.06, "malformed": 0.08, "empty": 0.06,
         "dead": 0.06}
EXPECTED = {None: "correct", "429": "correct", "500": "correct", "503": "correct", "drop": "correct",
            "hang": "correct", "malformed": "correct", "empty": "empty", "dead": "error"}


def _spec(url: str, **extra):
    return make_spec({"model": f"openai-compat:sim@{url}", "tokenizer": "local", "lengths": "512,1k,2k",
                      "depths": "0,0.25,0.5,0.75,1", "reps": 3, "timeout": 3.0, "retries": 3, "concurrency": 4,
                      **extra})


MUST_SEE = {"429", "drop", "hang", "malformed", "dead", "empty"}


def _plan_meeting_every_kind(spec) -> FaultPlan:
    """A fault plan under which these 45 prompts meet every kind in MUST_SEE: which prompt
    meets which fault is fixed by its hash, so a plan seed is chosen for the prompts the
    builder makes (a precondition of the test, not of its outcome: the labels are checked
    per case below)."""
    from ctxprobe.plan.grid import planned_cases
    from ctxprobe.cases.builder import build_cases

    hashes = [_messages_hash(c.messages) for c in build_cases(spec, planned_cases(spec))]
    for i in range(1000):
        plan = FaultPlan(RATES, times=1, hang_seconds=6.0, seed=f"faults{i or ''}")
        if MUST_SEE <= {plan.kind_for(h) for h in hashes}:
            return plan
    raise AssertionError("no fault seed meets every kind")


def test_every_fault_gets_its_label(tmp_path) -> None:
    tok = resolve_tokenizer("local")
    plan = _plan_meeting_every_kind(_spec("http://127.0.0.1:1/v1"))
    with SimServer(resolve_provider("sim:perfect", tok), tok, faults=plan, truncate_to=1500) as server:
        result = run_sweep(_spec(server.start()), tmp_path / "f.sqlite", progress=False)
    records = list(iter_export(result.run_id, tmp_path / "f.sqlite"))
    assert len(records) == 45 and all(r["outcome"] for r in records)  # none lost
    seen_kinds = set()
    for r in records:
        kind = plan.kind_for(_messages_hash(r["messages"]))
        seen_kinds.add(kind)
        if r["token_count"] > 1500 and kind not in ("dead",):
            # the server silently cut the prompt: flagged every time, never scored
            assert r["outcome"] == "input_truncated" and r["score"] is None, (kind, r["outcome"])
            continue
        assert r["outcome"] == EXPECTED[kind], (kind, r["outcome"], r["error"])
        if r["outcome"] == "error":
            assert r["score"] is None and r["attempts"] == 4
    assert MUST_SEE <= seen_kinds
    # nothing scored "wrong": every miss here is the harness's or the server's
    assert not any(r["outcome"] == "wrong" for r in records)


def test_sigkill_against_faulty_server_then_resume(tmp_path) -> None:
    store = tmp_path / "k.sqlite"
    tok = resolve_tokenizer("local")
    plan = FaultPlan({k: v for k, v in RATES.items() if k not in ("hang", "dead")}, times=1)
    with SimServer(resolve_provider("sim:perfect?latency=0.1", tok), tok, faults=plan) as server:
        url = server.start()
        args = [sys.executable, "-m", "ctxprobe.cli", "run", "--model", f"openai-compat:sim@{url}", "--tokenizer",
                "local", "--lengths", "512,1k,2k", "--reps", "3", "--retries", "3", "--concurrency", "2",
                "--store", str(store), "--no-progress", "--no-plots"]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        count = 0
        while count < 15 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            try:
                count = sqlite3.connect(store).execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            except sqlite3.Error:
                pass
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        db = sqlite3.connect(store)
        before = dict(db.execute("SELECT case_id, outcome FROM responses").fetchall())
        db.close()
        snapshot = dict(server.prompt_counts)
        assert 15 <= len(before) < 45
        done = subprocess.run(args, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
    (run_id,) = sqlite3.connect(store).execute("SELECT run_id FROM runs").fetchone()
    records = {r["case_id"]: r for r in iter_export(run_id, store)}
    assert len(records) == 45 and all(r["outcome"] for r in records.values())
    for case_id, outcome in before.items():
        assert records[case_id]["outcome"] == outcome  # nothing stored was lost or replaced
        digest = _messages_hash(records[case_id]["messages"])
        assert server.prompt_counts[digest] == snapshot[digest], case_id  # and none was sent again
