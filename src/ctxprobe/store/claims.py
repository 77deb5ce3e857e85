"""Several processes on one store: sessions with leases, and a claim per case before it is sent.

Two sweeps of the same spec on one store (two terminals, a CI retry, a cluster job array)
must neither send a case twice nor overwrite each other's answers. Each sweep process is a
**session**: a row with its host and pid and a lease (``lease_until``) that a heartbeat
thread renews every third of the lease. Before a case is built and sent, the session
**claims** it in one write transaction; the claim lives as long as the session does. A
case is claimable by session S when it has no final (non-``error``) response and

- nobody claimed it, or S already holds it;
- its holder is dead: its lease ran out, it ended, or it is a process on this host that no
  longer exists (a SIGKILLed sweep is taken over at once, not after the lease);
- its holder settled it (stored a response, necessarily ``error``) in a session that is
  over — an ``error`` is retried by a *later* session, never re-sent by a concurrent one.

A claim is settled, not deleted, when its response is stored, so a concurrent session does
not re-send a case whose retries another session just spent. Just before a request goes
out the session checks it still holds the claim (:meth:`Coordinator.still_mine`): a
process paused past its lease sends nothing that was taken over meanwhile. Whatever
races remain, the store never replaces a final response (``Store.save_response``).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ctxprobe.errors import CtxprobeError

#: Seconds a session's claims survive without a heartbeat (renewed every third of it).
DEFAULT_LEASE_S = 60.0
LEASE_ENV = "CTXPROBE_LEASE_SECONDS"


def lease_seconds() -> float:
    """The lease: ``CTXPROBE_LEASE_SECONDS`` when set to a positive number, else 60 s."""
    raw = os.environ.get(LEASE_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_LEASE_S
    except ValueError:
        return DEFAULT_LEASE_S
    return value if value > 0 else DEFAULT_LEASE_S


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (True when it cannot be told)."""
    if os.name == "nt":  # os.kill(pid, 0) would send CTRL_C_EVENT there: leave it to the lease
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists but is not ours, or cannot tell: assume alive (the lease decides)
    return True


@dataclass(frozen=True)
class SessionRow:
    session_id: str
    host: str
    pid: int
    lease_until: float
    ended_at: float | None

    def alive(self, now: float, host: str, pid_check: Callable[[int], bool] = pid_alive) -> bool:
        """Holding its claims: not ended, lease not run out, and (on this host) its process exists."""
        if self.ended_at is not None or self.lease_until < now:
            return False
        return not (self.host == host and not pid_check(self.pid))


def live_sessions(db: sqlite3.Connection, run_id: str, *, now: float | None = None,
                  host: str | None = None) -> list[SessionRow]:
    """The sessions of ``run_id`` that are still holding their claims."""
    now = time.time() if now is None else now
    host = host or socket.gethostname()
    rows = db.execute("SELECT session_id, host, pid, lease_until, ended_at FROM sessions WHERE run_id=?"
                      " AND ended_at IS NULL", (run_id,)).fetchall()
    return [s for s in (SessionRow(*r) for r in rows) if s.alive(now, host)]


@dataclass(frozen=True)
class ClaimResult:
    claimed: list[str]  # ours now: send them
    held: list[str]  # a live session holds them: wait, then ask again
    settled: list[str]  # a final response exists, or a live session (maybe us) already tried it


class Coordinator:
    """One session of one run on one store file (its own connection, usable from any thread)."""

    def __init__(self, path: str | Path, run_id: str, *, lease_s: float | None = None,
                 clock: Callable[[], float] = time.time, host: str | None = None, pid: int | None = None,
                 pid_check: Callable[[int], bool] = pid_alive) -> None:
        self.run_id = run_id
        self.lease_s = lease_s if lease_s is not None else lease_seconds()
        self.session_id = uuid.uuid4().hex
        self.host = host or socket.gethostname()
        self.pid = os.getpid() if pid is None else pid
        self._clock = clock
        self._pid_check = pid_check
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self.path = Path(path)
        self.db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")

    # -- session -----------------------------------------------------------------------
    def start(self, heartbeat: bool = True) -> Coordinator:
        now = self._clock()
        with self._lock:
            self.db.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,NULL)",
                            (self.session_id, self.run_id, self.host, self.pid, now, now + self.lease_s))
        if heartbeat:
            self._beat = threading.Thread(target=self._heartbeat_loop, name="ctxprobe-lease", daemon=True)
            self._beat.start()
        return self

    def renew(self) -> None:
        """Extend this session's lease, and with it every claim the session holds."""
        until = self._clock() + self.lease_s
        with self._lock:
            self.db.execute("UPDATE sessions SET lease_until=? WHERE session_id=?", (until, self.session_id))

    def _heartbeat_loop(self) -> None:
        # A thread, not an event-loop task: an in-process model may hold the loop for minutes.
        while not self._stop.wait(self.lease_s / 3):
            try:
                self.renew()
            except sqlite3.Error:
                pass  # a busy store: the next beat tries again, well within the lease

    def end(self) -> None:
        """Close the session: release claims never sent, mark it ended (idempotent)."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
            self._beat = None
        with self._lock:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("DELETE FROM claims WHERE session_id=? AND settled=0", (self.session_id,))
                self.db.execute("UPDATE sessions SET ended_at=? WHERE session_id=? AND ended_at IS NULL",
                                (self._clock(), self.session_id))
                self.db.execute("COMMIT")
            except sqlite3.Error:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
            finally:
                self.db.close()

    @property
    def stopping(self) -> threading.Event:
        """Set when the session ends: anything waiting on other sessions gives up."""
        return self._stop

    # -- claims ------------------------------------------------------------------------
    def claim(self, case_ids: Iterable[str]) -> ClaimResult:
        """Claim every claimable case of ``case_ids`` in one transaction."""
        ids = list(case_ids)
        claimed: list[str] = []
        held: list[str] = []
        settled: list[str] = []
        now = self._clock()
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                live = {s.session_id for s in self._live(now)}
                for case_id in ids:
                    verdict = self._verdict(case_id, live)
                    if verdict == "claim":
                        self.db.execute(
                            "INSERT INTO claims VALUES (?,?,?,?,0) ON CONFLICT(run_id, case_id) DO UPDATE SET"
                            " session_id=excluded.session_id, claimed_at=excluded.claimed_at, settled=0",
                            (self.run_id, case_id, self.session_id, now))
                        claimed.append(case_id)
                    else:
                        (held if verdict == "held" else settled).append(case_id)
                self.db.execute("COMMIT")
            except sqlite3.OperationalError as err:
                self._rollback()
                raise CtxprobeError(f"the store {self.path} stayed locked ({err}); another program holds it: "
                                    "rerun the same command to resume") from None
            except BaseException:
                self._rollback()
                raise
        return ClaimResult(claimed, held, settled)

    def _rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def _verdict(self, case_id: str, live: set[str]) -> str:
        final = self.db.execute("SELECT 1 FROM responses WHERE run_id=? AND case_id=? AND outcome != 'error'",
                                (self.run_id, case_id)).fetchone()
        if final:
            return "settled"
        row = self.db.execute("SELECT session_id, settled FROM claims WHERE run_id=? AND case_id=?",
                              (self.run_id, case_id)).fetchone()
        if row is None:
            return "claim"
        holder, was_settled = row
        if holder == self.session_id:
            return "settled" if was_settled else "claim"
        if holder in live:
            return "settled" if was_settled else "held"
        return "claim"  # its holder is gone: take it over

    def _live(self, now: float) -> list[SessionRow]:
        rows = self.db.execute("SELECT session_id, host, pid, lease_until, ended_at FROM sessions WHERE run_id=?"
                               " AND ended_at IS NULL", (self.run_id,)).fetchall()
        return [s for s in (SessionRow(*r) for r in rows)
                if s.session_id == self.session_id or s.alive(now, self.host, self._pid_check)]

    def still_mine(self, case_id: str) -> bool:
        """Whether this session still holds ``case_id`` unsettled — asked just before a
        request goes out: a process paused past its lease (laptop sleep, SIGSTOP) finds
        its claims taken over and sends none of them."""
        with self._lock:
            row = self.db.execute("SELECT session_id, settled FROM claims WHERE run_id=? AND case_id=?",
                                  (self.run_id, case_id)).fetchone()
        return row is not None and row[0] == self.session_id and not row[1]

    def settle(self, case_id: str) -> None:
        """The case's response is stored: the claim stays, marked done for this session."""
        with self._lock:
            self.db.execute("UPDATE claims SET settled=1 WHERE run_id=? AND case_id=? AND session_id=?",
                            (self.run_id, case_id, self.session_id))

    def others_alive(self) -> list[SessionRow]:
        """Other live sessions of this run (e.g. to leave its status ``running`` for them)."""
        with self._lock:
            return [s for s in self._live(self._clock()) if s.session_id != self.session_id]
