"""The store as ``ctxprobe view`` reads it: read-only, through the report's own loaders.

Every read happens inside :func:`ctxprobe.store.reading_only`, so the store is opened with
``mode=ro`` (never created, migrated or written; its WAL lets it be read while a sweep
writes) and a store at another schema is refused in one line. A run is read by
:func:`ctxprobe.report.rundata.load_run` and analysed by
:func:`ctxprobe.report.analyse.analyse_run` — exactly what ``report --json`` calls through
``load_report`` — so every number a page shows is the JSON report's. Analyses are cached
per run until the run changes (its responses, status or last update)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ctxprobe.errors import CtxprobeError
from ctxprobe.report.analyse import analyse_run
from ctxprobe.report.rundata import RunData, load_run
from ctxprobe.report.runreport import Report
from ctxprobe.store import CaseRecord, RunRecord, iter_records, open_existing, reading_only

T = TypeVar("T")

#: A run still being written is analysed again at most this often (its progress, read
#: from the run's record, is always current; its intervals may lag by this much).
LIVE_REFRESH_S = 3.0
_LIVE = ("running", "waiting")


@dataclass(frozen=True)
class LoadedRun:
    """One run as its pages read it: the loaded rows (billing) and the analysed report."""

    data: RunData
    report: Report

    @property
    def json(self) -> dict[str, Any]:
        """``report RUN --json`` of this run (the same call, the same objects)."""
        return self.report.to_dict()


def _version(run: RunRecord) -> tuple[str, str, int, int]:
    return run.status, run.updated_at, run.n_responses, run.n_cases


class StoreSource:
    """Read-only access to one store file, with per-run caches."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._runs: dict[str, tuple[tuple[str, str, int, int], LoadedRun, float]] = {}
        self._records: dict[str, tuple[tuple[str, str, int, int], list[CaseRecord]]] = {}

    def read(self, fn: Callable[[], T]) -> T:
        with reading_only():
            return fn()

    def check(self) -> None:
        """A missing, unreadable or other-schema store: the one-line error, before serving."""
        if not self.path.exists():
            raise CtxprobeError(f"no store at {self.path}; run a sweep first or pass --store PATH")
        self.runs()

    def runs(self) -> list[RunRecord]:
        def go() -> list[RunRecord]:
            with open_existing(self.path) as store:
                return store.list_runs()
        return self.read(go)

    def run(self, run_id: str) -> RunRecord:
        def go() -> RunRecord:
            with open_existing(self.path) as store:
                return store.require_run(run_id)
        return self.read(go)

    def loaded(self, run: RunRecord | str) -> LoadedRun:
        """The run read and analysed as ``report --json`` does (cached until it changes)."""
        record = self.run(run) if isinstance(run, str) else run
        key = _version(record)
        with self._lock:
            hit = self._runs.get(record.run_id)
        if hit is not None and (hit[0] == key or (record.status in _LIVE and hit[0][0] in _LIVE
                                                  and time.monotonic() - hit[2] < LIVE_REFRESH_S)):
            return hit[1]

        def go() -> LoadedRun:
            data = load_run(record.run_id, self.path)
            return LoadedRun(data, analyse_run(data, None, None))
        found = self.read(go)
        with self._lock:
            self._runs[record.run_id] = (_version(found.data.run), found, time.monotonic())
        return found

    def records(self, run_id: str) -> list[CaseRecord]:
        """Every case record of the run (case, prompt, response, score)."""
        record = self.run(run_id)
        key = _version(record)
        with self._lock:
            hit = self._records.get(record.run_id)
        if hit is not None and hit[0] == key:
            return hit[1]
        found = self.read(lambda: list(iter_records(record.run_id, self.path)))
        with self._lock:
            self._records[record.run_id] = (key, found)
        return found
