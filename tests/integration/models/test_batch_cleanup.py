"""``run --batch`` on OpenAI deletes what a batch leaves in the account's file storage (the
uploaded input file, the output and error files) once its results are stored; a delete
the provider refuses is one line without the key, and the run's results are kept."""

from __future__ import annotations

import io
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

from fake_batch_apis import OpenAIBatchFake

SECRET = "sk-SENTINEL-cleanup-key-do-not-leak-7c1f0a"
#: First sending by place in its batch: answered, cut short, failed transiently (resent), failed for good.
FIRST = ["ok", "length", "transient", "permanent"]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIBatchFake]:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with OpenAIBatchFake(lambda seen, i: FIRST[i] if seen == 1 else "ok") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + server.suffix)
        yield server


def _sweep(store: Path) -> tuple[Counter[str], str]:
    spec = make_spec({"model": "openai:m", "tokenizer": "local", "lengths": [512], "depths": [0, 1], "reps": 2,
                      "batch": True, "batch_poll": 0.01, "retries": 2})
    out = io.StringIO()
    run_sweep(spec, store, progress=False, console=Console(file=out, width=200))
    db = sqlite3.connect(store)
    try:
        return Counter(r[0] for r in db.execute("SELECT outcome FROM responses")), out.getvalue()
    finally:
        db.close()


def test_collected_batches_leave_no_files(fake: OpenAIBatchFake, tmp_path: Path) -> None:
    outcomes, said = _sweep(tmp_path / "s.sqlite")
    assert outcomes == Counter({"correct": 2, "output_truncated": 1, "error": 1})  # stored, then deleted
    assert fake.calls["create"] == 2  # the first batch, then the transient failure resent
    # two uploads, the first batch's output and error files, the resend's output file
    assert len(fake.made) == 5 and sorted(fake.deleted) == sorted(fake.made) and fake.files == {}
    assert fake.calls["delete"] == 5 and "could not delete" not in said


def test_a_refused_delete_is_one_line_and_the_results_stay(fake: OpenAIBatchFake, tmp_path: Path) -> None:
    fake.refuse_delete = True  # answered 400, the message echoing the key
    outcomes, said = _sweep(tmp_path / "s.sqlite")
    assert outcomes == Counter({"correct": 2, "output_truncated": 1, "error": 1})
    assert fake.calls["delete"] == 5 and fake.deleted == [] and len(fake.files) == 5  # each file was tried
    lines = [line for line in said.splitlines() if "could not delete" in line]
    assert len(lines) == 2  # one line per batch, naming its files
    assert "batch_1: could not delete its files at openai (left there): file-1, file-2, file-3: HTTP 400" in lines[0]
    assert "batch_2: could not delete its files at openai (left there): file-4, file-5: HTTP 400" in lines[1]
    assert "made with key ***" in lines[0]  # the provider echoed the key: scrubbed
    assert SECRET not in said and SECRET[:12] not in said
