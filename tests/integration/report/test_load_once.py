"""``report.rundata.load_run`` reads a run's case records (prompts included) once, however
many family labels it has: each part of the report (family extras, overlap, variants, the
answers' needs) reads the same records instead of reading the store again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import ctxprobe.store.db as db
from ctxprobe.core.records import CaseRecord
from ctxprobe.report.rundata import load_run
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep


def test_load_run_reads_the_records_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "s.sqlite"
    spec = make_spec({"model": "sim:blind-middle", "tokenizer": "local",
                      "families": {"niah": {}, "vartrack": {}, "phonebook": {}}, "lengths": [1024, 2048],
                      "depths": [0.0], "reps": 2, "seed": 2})
    run_id = run_sweep(spec, store, progress=False).run_id
    reads: list[str] = []
    real = db.read_case_records

    def counted(conn: object, rid: str) -> Iterator[CaseRecord]:
        reads.append(rid)
        return real(conn, rid)  # type: ignore[arg-type]

    monkeypatch.setattr(db, "read_case_records", counted)
    data = load_run(run_id, store)
    assert reads == [run_id]
    assert {r.family for r in data.rows} == {"niah", "vartrack", "phonebook"}
    assert "phonebook" in data.family_extras  # the family that reads prompts still got them
