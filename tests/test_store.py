from __future__ import annotations

import sqlite3

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.store import Store
from ctxprobe.store.migrations import MIGRATIONS
from ctxprobe.tasks.case import Case, Cell


def _case(depth: float = 0.5) -> Case:
    return Case(cell=Cell("niah", 1024, depth), rep=0, seed=7, messages=[{"role": "user", "content": "hi"}],
                expected=["1234567"], distractors=["7654321"], meta={"key": "a-b-1"}, token_count=1000,
                needle_token_pos=400, realised_depth=0.49)


def test_migrations_recorded_and_idempotent(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    Store(path).close()
    Store(path).close()
    names = [r[0] for r in sqlite3.connect(path).execute("SELECT name FROM _migrations")]
    assert names == [n for n, _ in MIGRATIONS]


def test_roundtrip_and_resume_set(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        assert store.ensure_run("abc123", model="m", tokenizer="t", family="niah", version="0", spec={"x": 1},
                                meta={}) is False
        assert store.ensure_run("abc123", model="m", tokenizer="t", family="niah", version="0", spec={"x": 1},
                                meta={}) is True
        a, b = _case(0.0), _case(1.0)
        store.save_case("abc123", a)
        store.save_case("abc123", b)
        store.save_response("abc123", a.case_id, output="1234567", finish_reason="stop", reported_prompt_tokens=1000,
                            completion_tokens=3, latency_s=0.1, attempts=1, error=None, score=1.0,
                            outcome="correct", detail={})
        store.save_response("abc123", b.case_id, output=None, finish_reason=None, reported_prompt_tokens=None,
                            completion_tokens=None, latency_s=None, attempts=5, error="boom", score=None,
                            outcome="error", detail={})
        # errors are not final: they are retried on resume
        assert store.done_case_ids("abc123") == {a.case_id}
        rows = store.result_rows("abc123")
        assert {(r.depth, r.outcome, r.score) for r in rows} == {(0.0, "correct", 1.0), (1.0, "error", None)}
        # the same prompt text is stored once however many cases use it
        assert store.db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == 1
        assert store.get_run("abc").run_id == "abc123"  # unique prefix
        records = list(store.iter_case_records("abc123"))
        assert records[0]["messages"] == a.messages and records[0]["output"] == "1234567"


def test_unwritable_path_is_one_line(tmp_path) -> None:
    with pytest.raises(CtxprobeError) as info:
        Store(tmp_path / "no" / "such" / "dir" / "s.sqlite")
    assert "--store" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(CtxprobeError):
        Store(tmp_path)  # a directory


def test_missing_run_message(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(CtxprobeError, match="ctxprobe runs"):
            store.require_run("nope")
