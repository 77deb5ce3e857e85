"""Store rules for processes sharing a store: claims, leases, takeover, no overwritten answers."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from ctxprobe.core.records import StoredResponse
from ctxprobe.store import Store
from ctxprobe.store.claims import Coordinator
from ctxprobe.store.migrations import MIGRATIONS
from ctxprobe.core.case import Case, Cell

RUN = "r1"


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "s.sqlite")
    store.ensure_run(RUN, model="m", tokenizer="t", family="niah", version="0", spec={}, meta={})
    for i in range(3):
        store.save_case(RUN, Case(cell=Cell("niah", 1024, i / 2), rep=0, seed=1,
                                  messages=[{"role": "user", "content": f"q{i}"}], expected=["1234567"]))
    return store


def _respond(store: Store, case_id: str, outcome: str, output: str | None = "x") -> bool:
    return store.save_response(RUN, case_id, StoredResponse(output=output, finish_reason="stop", reported_prompt_tokens=10,
                               completion_tokens=1, latency_s=0.1, attempts=1,
                               error="timed out" if outcome == "error" else None,
                               score=None if outcome == "error" else float(outcome == "correct"), outcome=outcome,
                               detail={}))


def _coord(store: Store, clock: Clock, host: str, pid: int = 1, dead: frozenset[int] = frozenset()) -> Coordinator:
    return Coordinator(store.path, RUN, lease_s=10.0, clock=clock, host=host, pid=pid,
                       pid_check=lambda p: p not in dead).start(heartbeat=False)


A, B, C = "niah/L1024/d0/r0", "niah/L1024/d0.5/r0", "niah/L1024/d1/r0"


def test_a_final_response_is_never_replaced(tmp_path) -> None:
    with _store(tmp_path) as store:
        assert _respond(store, A, "correct", "1234567")
        assert not _respond(store, A, "error", None)  # a later timeout does not replace the answer
        assert not _respond(store, A, "wrong", "7")  # nor does a second, different answer
        row = store.db.execute("SELECT outcome, output FROM responses WHERE case_id=?", (A,)).fetchone()
        assert row == ("correct", "1234567")
        # an error is not final: a retry's answer replaces it, and so does a newer error
        assert _respond(store, B, "error", None) and _respond(store, B, "error", None)
        assert _respond(store, B, "wrong", "7")
        assert store.db.execute("SELECT outcome FROM responses WHERE case_id=?", (B,)).fetchone() == ("wrong",)


def test_claims_are_exclusive_and_a_lapsed_lease_is_taken_over(tmp_path) -> None:
    clock = Clock()
    with _store(tmp_path) as store:
        a = _coord(store, clock, "host-a")
        b = _coord(store, clock, "host-b")
        assert a.claim([A, B]).claimed == [A, B]
        got = b.claim([A, B, C])
        assert got.claimed == [C] and got.held == [A, B]
        clock.t += 5
        a.renew()  # a heartbeat moves a's lease (and its claims) to t + 10
        clock.t += 10  # exactly at the lease's end: still a's
        assert b.claim([A]).held == [A]
        clock.t += 0.001  # one moment past it: a is presumed dead, b takes over
        assert b.claim([A, B]).claimed == [A, B]
        b.renew()  # b's own heartbeat (it started at t=1000)
        assert a.claim([A]).held == [A]  # and a, if it was only slow, no longer sends it


def test_a_dead_process_on_this_host_is_taken_over_at_once(tmp_path) -> None:
    clock = Clock()
    with _store(tmp_path) as store:
        a = _coord(store, clock, "here", pid=111)
        assert a.claim([A]).claimed == [A]
        alive_check = _coord(store, clock, "here", pid=222)
        assert alive_check.claim([A]).held == [A]  # pid 111 is alive: wait for it
        b = _coord(store, clock, "here", pid=333, dead=frozenset({111}))
        assert b.claim([A]).claimed == [A]  # pid 111 is gone: no need to wait for its lease
        other_host = _coord(store, clock, "elsewhere", pid=444, dead=frozenset({333}))
        assert other_host.claim([A]).held == [A]  # a pid on another host says nothing


def test_answered_and_concurrently_failed_cases_are_not_sent_again(tmp_path) -> None:
    clock = Clock()
    with _store(tmp_path) as store:
        a = _coord(store, clock, "host-a")
        b = _coord(store, clock, "host-b")
        assert a.claim([A, B]).claimed == [A, B]
        _respond(store, A, "correct")
        a.settle(A)
        _respond(store, B, "error", None)  # a spent its retries on B
        a.settle(B)
        got = b.claim([A, B])
        assert got.settled == [A, B] and not got.claimed  # a live session just tried B: not re-sent now
        assert a.claim([B]).settled == [B]  # nor by a itself in the same session
        a.end()
        # a later session (a has ended) retries the error, never the answer
        assert b.claim([A, B]).claimed == [B]


def test_end_releases_unsent_claims(tmp_path) -> None:
    clock = Clock()
    with _store(tmp_path) as store:
        a = _coord(store, clock, "host-a")
        b = _coord(store, clock, "host-b")
        a.claim([A, B, C])
        a.end()
        assert b.claim([A, B, C]).claimed == [A, B, C]


def test_status_interrupted_when_no_process_holds_a_running_run(tmp_path) -> None:
    clock = Clock()
    with _store(tmp_path) as store:
        store.update_run(RUN, status="running")
        assert store.get_run(RUN).status == "interrupted"  # running, but no session at all
        c = Coordinator(store.path, RUN, lease_s=30.0).start(heartbeat=False)  # this live process
        assert store.get_run(RUN).status == "running"
        c.end()
        assert store.get_run(RUN).status == "interrupted"
        dead = _coord(store, clock, "elsewhere")  # lease ran out long ago (clock at t=1000)
        assert store.get_run(RUN).status == "interrupted"
        dead.end()
        store.update_run(RUN, status="complete")
        assert store.get_run(RUN).status == "complete"


def test_counts_are_against_planned_cases(tmp_path) -> None:
    with _store(tmp_path) as store:
        _respond(store, A, "correct")
        _respond(store, B, "error", None)
        store.update_run(RUN, meta={"planned_cases": 23})
        run = store.get_run(RUN)
        assert (run.n_planned, run.n_cases, run.n_responses, run.n_final) == (23, 3, 2, 1)


def test_concurrent_openers_apply_each_migration_once(tmp_path) -> None:
    path = tmp_path / "fresh.sqlite"
    src = str(Path(__file__).resolve().parents[2] / "src")
    code = ("import sys; sys.path.insert(0, %r); from ctxprobe.store import Store; Store(%r).close()" % (src, str(path)))
    procs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    names = [r[0] for r in sqlite3.connect(path).execute("SELECT name FROM _migrations")]
    assert names == [n for n, _ in MIGRATIONS]


def test_still_mine_until_taken_over_or_settled(tmp_path) -> None:
    clock = Clock()
    with _store(tmp_path) as store:
        a = _coord(store, clock, "host-a")
        a.claim([A, B])
        assert a.still_mine(A) and a.still_mine(B) and not a.still_mine(C)
        a.settle(B)
        assert not a.still_mine(B)  # answered: not sent again
        clock.t += 10.001  # a paused past its lease: b takes A over
        b = _coord(store, clock, "host-b")
        assert b.claim([A]).claimed == [A]
        assert not a.still_mine(A) and b.still_mine(A)
