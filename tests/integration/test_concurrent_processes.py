"""Several real processes run the same spec on one SQLite store against one sim server.

The server counts what it receives, so duplicates are counted where they would cost
money; the store is read directly with sqlite3, not through ctxprobe.
"""

from __future__ import annotations


import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from ctxprobe.models import resolve_provider
from ctxprobe.sim.faults import FaultPlan
from ctxprobe.sim.server import SimServer, _messages_hash
from ctxprobe.sweep.preflight import PROBE_MESSAGES
from ctxprobe.core.case import prompt_hash
from ctxprobe.tokenizers import resolve_tokenizer


def _args(url: str, store: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ctxprobe.cli", "run", "--model", f"openai-compat:sim@{url}", "--tokenizer",
            "local", "--lengths", "512,1k", "--depths", "0,0.5,1", "--reps", "5", "--concurrency", "2",
            "--store", str(store), "--no-progress", "--no-plots", *extra]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _responses(path: Path) -> dict[str, tuple[str, str | None]]:
    """case_id -> (outcome, output), read with plain sqlite3 (empty while the store is young)."""
    try:
        db = sqlite3.connect(path, timeout=30)
        rows = db.execute("SELECT case_id, outcome, output FROM responses").fetchall()
        db.close()
    except sqlite3.Error:
        return {}
    return {c: (o, out) for c, o, out in rows}


def _prompts(path: Path) -> dict[str, str]:
    db = sqlite3.connect(path)
    rows = db.execute("SELECT c.case_id, p.messages_json FROM cases c JOIN prompts p USING (prompt_hash)").fetchall()
    db.close()
    return {c: prompt_hash(json.loads(m)) for c, m in rows}


def test_three_processes_one_store_no_duplicate_requests(tmp_path, case_requests, spawn) -> None:
    store = tmp_path / "s.sqlite"
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect?latency=0.25", tok), tok) as server:
        url = server.start()
        procs = [spawn(_args(url, store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=_env()) for _ in range(3)]
        errs = [p.communicate(timeout=240)[1] for p in procs]
        for p, err in zip(procs, errs):
            assert p.returncode == 0, err
        stored = _responses(store)
        assert len(stored) == 30 and all(o == "correct" for o, _ in stored.values())
        # 0 duplicate requests: the server received each of the 30 prompts exactly once
        assert case_requests(server) == 30
        prompts = _prompts(store)
        assert all(server.prompt_counts[prompts[c]] == 1 for c in stored)
        # the work was shared, not done by the first process alone
        sent = [int(e.split(" requests sent")[0].rsplit(" ", 1)[-1]) for e in errs]
        assert sum(sent) == 30 and max(sent) < 30, sent
        status = sqlite3.connect(store).execute("SELECT status FROM runs").fetchone()[0]
        assert status == "complete"


def test_a_failing_process_never_overwrites_stored_answers(tmp_path, spawn) -> None:
    """The issue's finding: a second process with --retries 0 whose requests time out
    replaced stored `correct` responses with `error`. Now every answer seen stored stays,
    and only prompts that really timed out are ever sent twice."""
    store = tmp_path / "f.sqlite"
    tok = resolve_tokenizer("local")
    # the first attempt of about half the prompts hangs 1 s: past the failing process's
    # 0.5 s timeout, within the healthy one's
    faults = next(plan for plan in (FaultPlan({"hang": 0.5}, hang_seconds=1.0, seed=f"s{i}") for i in range(50))
                  if plan.kind_for(_messages_hash(PROBE_MESSAGES)) is None)
    with SimServer(resolve_provider("sim:perfect?latency=0.1", tok), tok, faults=faults) as server:
        url = server.start()
        good = spawn(_args(url, store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                     env=_env())
        deadline = time.monotonic() + 60
        while len(_responses(store)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        bad = spawn(_args(url, store, "--retries", "0", "--timeout", "0.5"), stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, text=True, env=_env())
        seen: dict[str, tuple[str, str | None]] = {}
        errored: set[str] = set()
        while good.poll() is None or bad.poll() is None:
            for case_id, (outcome, output) in _responses(store).items():
                if outcome == "correct":
                    seen.setdefault(case_id, (outcome, output))
                elif outcome == "error":
                    errored.add(case_id)
            time.sleep(0.02)
        good_err, bad_err = good.communicate()[1], bad.communicate()[1]
        final = _responses(store)
        assert len(seen) >= 2 and errored, "both processes should have stored answers"
        assert all(final[c] == v for c, v in seen.items()), "a stored correct answer was replaced"
        assert len(final) == 30
        assert {good.returncode, bad.returncode} <= {0, 3}, (good_err, bad_err)
        left = [c for c, (o, _) in final.items() if o == "error"]
        if left:  # whatever is left as `error` is reported as an incomplete run
            assert 3 in (good.returncode, bad.returncode), (good_err, bad_err)
        prompts = _prompts(store)
        for case_id in final:
            count = server.prompt_counts[prompts[case_id]]
            if faults.kind_for(prompts[case_id]) != "hang":
                assert count == 1, case_id  # healthy prompts: 0 duplicate requests
            else:
                assert count <= 2, case_id  # a timed-out attempt, retried once by a later session


def test_killed_process_claims_are_taken_over(tmp_path, case_requests, spawn) -> None:
    store = tmp_path / "k.sqlite"
    tok = resolve_tokenizer("local")
    # slow enough that the victim is still at work once the survivor has started (~5 s here)
    with SimServer(resolve_provider("sim:perfect?latency=0.8", tok), tok) as server:
        url = server.start()
        victim = spawn(_args(url, store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env())
        deadline = time.monotonic() + 60
        while len(_responses(store)) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        survivor = spawn(_args(url, store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=_env())

        def claims(settled: int) -> dict[int, int]:
            try:
                db = sqlite3.connect(store, timeout=30)
                rows = db.execute("SELECT s.pid, COUNT(*) FROM claims c JOIN sessions s USING (session_id)"
                                  " WHERE c.settled=? GROUP BY s.pid", (settled,)).fetchall()
                db.close()
            except sqlite3.Error:
                return {}
            return dict(rows)

        # kill the victim once both are at work: the survivor has answered a case of its own and
        # the victim holds claims it has not answered (sampled until both hold: under load the
        # victim can be between an answer and its next claim at any one look)
        held = 0
        while time.monotonic() < deadline:
            if claims(1).get(survivor.pid, 0) >= 1:
                held = claims(0).get(victim.pid, 0)
                if held > 0:
                    break
            time.sleep(0.02)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        assert held > 0, "the kill should land while the victim holds claims"
        _, err = survivor.communicate(timeout=240)
        assert survivor.returncode == 0, err
        final = _responses(store)
        assert len(final) == 30 and all(o == "correct" for o, _ in final.values())
        # only what the victim had in flight at the kill (concurrency 2) can have been sent twice
        assert case_requests(server) <= 30 + 2
        status = sqlite3.connect(store).execute("SELECT status FROM runs").fetchone()[0]
        assert status == "complete"


def test_two_processes_building_in_parallel_neither_waits_forever(tmp_path, case_requests, spawn) -> None:
    """With --build-workers, cases a process has claimed can sit built but not yet sent; a
    process must never wait on others' claims while holding such cases (each would wait for
    the other for ever). Both finish, and each case is sent once."""
    store = tmp_path / "p.sqlite"
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect?latency=0.25", tok), tok) as server:
        url = server.start()
        procs = [spawn(_args(url, store, "--build-workers", "2"), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=_env()) for _ in range(2)]
        errs = [p.communicate(timeout=300)[1] for p in procs]
        for p, err in zip(procs, errs):
            assert p.returncode == 0, err
        stored = _responses(store)
        assert len(stored) == 30 and all(o == "correct" for o, _ in stored.values())
        assert case_requests(server) == 30


def _store_unlocked(store: Path) -> bool:
    """True when no process holds the store's write lock (a stopped one must not)."""
    try:
        db = sqlite3.connect(store, timeout=0.5, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        db.execute("ROLLBACK")
        db.close()
    except sqlite3.OperationalError:
        return False
    return True


def test_a_process_paused_past_its_lease_is_taken_over_and_overwrites_nothing(tmp_path, case_requests, spawn) -> None:
    """SIGSTOP (a laptop asleep, a paused VM): the process exists but its lease runs out.
    The other process takes its cases over; when it wakes up it sends none of them and its
    late replies replace no stored answer."""
    store = tmp_path / "z.sqlite"
    env = {**_env(), "CTXPROBE_LEASE_SECONDS": "3"}
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect?latency=0.8", tok), tok) as server:
        url = server.start()
        sleeper = spawn(_args(url, store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                        env=env)
        deadline = time.monotonic() + 60
        while len(_responses(store)) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        other = spawn(_args(url, store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                      env=env)
        while not _settled_by(store, other.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        for _ in range(20):  # pause it outside a write transaction, or the other would wait on the lock
            os.kill(sleeper.pid, signal.SIGSTOP)
            if _store_unlocked(store):
                break
            os.kill(sleeper.pid, signal.SIGCONT)
            time.sleep(0.05)
        try:
            _, err = other.communicate(timeout=240)
            assert other.returncode == 0, err
            answered = _responses(store)
            assert len(answered) == 30 and all(o == "correct" for o, _ in answered.values())
            sent_before_wake = case_requests(server)
        finally:
            os.kill(sleeper.pid, signal.SIGCONT)
        _, err = sleeper.communicate(timeout=240)
        assert sleeper.returncode == 0, err
        assert _responses(store) == answered  # its late replies replaced nothing
        assert case_requests(server) == sent_before_wake  # awake, it sent nothing more
        # only what it had in flight when paused (concurrency 2) was sent twice
        assert sent_before_wake <= 30 + 2


def _settled_by(store: Path, pid: int) -> bool:
    try:
        db = sqlite3.connect(store, timeout=30)
        n = db.execute("SELECT COUNT(*) FROM claims c JOIN sessions s USING (session_id) WHERE s.pid=? AND c.settled=1",
                       (pid,)).fetchone()[0]
        db.close()
    except sqlite3.Error:
        return False
    return n > 0
