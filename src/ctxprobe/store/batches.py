"""A run's provider batches in the store (the ``batches`` table, migration ``m005_batches``).

Each write commits at once: a batch id is in the store the moment the provider gave it,
so a killed ``ctxprobe run --batch`` polls the same batches when rerun.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone

from ctxprobe.core.batch_journal import COLLECTED, OPEN_STATES, SUBMITTED, BatchEntry


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class StoreJournal:
    """The :class:`~ctxprobe.core.batch_journal.BatchJournal` of one run in a store."""

    def __init__(self, db: sqlite3.Connection, run_id: str) -> None:
        self.db = db
        self.run_id = run_id

    def open_batches(self, provider: str) -> list[BatchEntry]:
        rows = self.db.execute(
            "SELECT batch_key, provider, case_ids_json, round, batch_id, state, provider_status FROM batches"
            f" WHERE run_id=? AND provider=? AND state IN ({','.join('?' * len(OPEN_STATES))})"
            " ORDER BY created_at, batch_key", (self.run_id, provider, *OPEN_STATES)).fetchall()
        return [BatchEntry(key, prov, tuple(json.loads(ids)), int(rnd), bid, state, status)
                for key, prov, ids, rnd, bid, state, status in rows]

    def record(self, entry: BatchEntry) -> None:
        now = _now()
        with self.db:
            self.db.execute(
                "INSERT INTO batches (run_id, batch_key, provider, batch_id, state, provider_status, round,"
                " case_ids_json, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (self.run_id, entry.key, entry.provider, entry.batch_id, entry.state, entry.provider_status,
                 entry.round, json.dumps(list(entry.case_ids)), now, now))

    def submitted(self, key: str, batch_id: str, status: str | None) -> None:
        self._set(key, batch_id=batch_id, state=SUBMITTED, provider_status=status)

    def status(self, key: str, status: str) -> None:
        self._set(key, provider_status=status)

    def close(self, key: str, state: str) -> None:
        self._set(key, state=state)

    def close_answered(self, done: set[str]) -> None:
        """Close open batches whose every case has a final response (collected, then the
        process was killed before it marked them)."""
        for entry in self.open_batches_all():
            if entry.batch_id and set(entry.case_ids) <= done:
                self.close(entry.key, COLLECTED)

    def open_batches_all(self) -> list[BatchEntry]:
        providers = [r[0] for r in self.db.execute("SELECT DISTINCT provider FROM batches WHERE run_id=?",
                                                   (self.run_id,))]
        return [e for p in providers for e in self.open_batches(p)]

    def _set(self, key: str, **values: str | None) -> None:
        cols = ", ".join(f"{k}=?" for k in values)
        with self.db:
            self.db.execute(f"UPDATE batches SET {cols}, updated_at=? WHERE run_id=? AND batch_key=?",
                            (*values.values(), _now(), self.run_id, key))


def waiting_batches(db: sqlite3.Connection, run_id: str) -> list[tuple[str, str | None, int]]:
    """The run's batches not yet collected: (provider, its last polled status, requests)."""
    rows = db.execute(
        "SELECT provider, provider_status, case_ids_json FROM batches WHERE run_id=? AND state IN"
        f" ({','.join('?' * len(OPEN_STATES))}) ORDER BY created_at, batch_key", (run_id, *OPEN_STATES)).fetchall()
    return [(p, s, len(json.loads(ids))) for p, s, ids in rows]


def batch_summary(db: sqlite3.Connection, run_id: str) -> str | None:
    """``in_progress`` (one batch), ``2 batches: in_progress`` …; None when none is waiting."""
    waiting = waiting_batches(db, run_id)
    if not waiting:
        return None
    statuses = sorted({s or "submitting" for _, s, _ in waiting})
    head = f"{len(waiting)} batches: " if len(waiting) > 1 else ""
    return head + ",".join(statuses)
