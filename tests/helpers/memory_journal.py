"""A batch journal in memory, for the batch executor's tests (a run journals its batches in
its store).

The journal's entry, states and protocol are :mod:`ctxprobe.core.batch_journal`; the
store's journal is :class:`ctxprobe.store.batches.StoreJournal`.
"""

from __future__ import annotations

from dataclasses import replace

from ctxprobe.core.batch_journal import OPEN_STATES, SUBMITTED, BatchEntry


class MemoryJournal:
    """A journal in a dict."""

    def __init__(self) -> None:
        self.entries: dict[str, BatchEntry] = {}

    def open_batches(self, provider: str) -> list[BatchEntry]:
        return [e for e in self.entries.values() if e.provider == provider and e.state in OPEN_STATES]

    def record(self, entry: BatchEntry) -> None:
        self.entries[entry.key] = entry

    def submitted(self, key: str, batch_id: str, status: str | None) -> None:
        self.entries[key] = replace(self.entries[key], batch_id=batch_id, state=SUBMITTED, provider_status=status)

    def status(self, key: str, status: str) -> None:
        self.entries[key] = replace(self.entries[key], provider_status=status)

    def close(self, key: str, state: str) -> None:
        self.entries[key] = replace(self.entries[key], state=state)
