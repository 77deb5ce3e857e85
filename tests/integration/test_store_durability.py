"""Every store write is committed the moment it is made: a process that dies without
closing the store (SIGKILL, power to the process cut) loses nothing it had written. Also
the store's other promises at their edges: a retried error is replaced by its answer,
costs sum from zero, a response needs its case, a run-id prefix must be unique.

The writer is a separate process that leaves through ``os._exit`` -- no ``close()``, no
interpreter shutdown, no implicit commit -- and the reader is a fresh connection.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.store import Store, StoredResponse

_WRITER = r"""
import os, sys
from ctxprobe.store import Store, StoredResponse
from ctxprobe.core.case import Case, Cell

store = Store(sys.argv[1])
stop_after = sys.argv[2]
case = Case(cell=Cell("niah", 1024, 0.5), rep=0, seed=7, messages=[{"role": "user", "content": "hi"}],
            expected=["1234567"], token_count=1000)
store.ensure_run("run1", model="m", tokenizer="t", family="niah", version="0", spec={"x": 1}, meta={"a": 1})
if stop_after == "run":
    os._exit(0)
store.save_case("run1", case)
if stop_after == "case":
    os._exit(0)
store.save_response("run1", case.case_id, StoredResponse(output="1234567", finish_reason="stop", reported_prompt_tokens=1000,
                    completion_tokens=3, latency_s=0.1, attempts=1, error=None, score=1.0, outcome="correct",
                    detail={"k": 1}))
if stop_after == "response":
    os._exit(0)
store.update_run("run1", status="done", meta={"b": 2})
os._exit(0)  # never close(): only what was committed survives
"""


def _write_then_die(path: Path, stop_after: str) -> None:
    import ctxprobe

    src = str(Path(ctxprobe.__file__).resolve().parents[1])  # the same ctxprobe as this process
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run([sys.executable, "-c", _WRITER, str(path), stop_after], env=env, check=True, timeout=60)


def test_each_write_survives_a_process_that_dies_right_after_it(tmp_path) -> None:
    steps = {"run": (1, 0, 0), "case": (1, 1, 0), "response": (1, 1, 1)}
    for stop_after, (runs, cases, responses) in steps.items():
        path = tmp_path / f"{stop_after}.sqlite"
        _write_then_die(path, stop_after)
        db = sqlite3.connect(path)
        counts = tuple(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "cases", "responses"))
        db.close()
        assert counts == (runs, cases, responses), stop_after


def test_run_update_survives_and_a_rerun_sees_the_response_as_done(tmp_path) -> None:
    path = tmp_path / "all.sqlite"
    _write_then_die(path, "all")
    with Store(path) as store:
        run = store.require_run("run1")
        assert run.status == "done" and run.meta.to_json() == {"a": 1, "b": 2}
        assert store.done_case_ids("run1") == {"niah/L1024/d0.5/r0"}
        (record,) = store.iter_case_records("run1")
        assert record["output"] == "1234567" and record["detail"] == {"k": 1}


def test_a_second_connection_sees_a_response_while_the_writer_is_still_open(tmp_path) -> None:
    from ctxprobe.core.case import Case, Cell

    path = tmp_path / "live.sqlite"
    case = Case(cell=Cell("niah", 512, 0.0), rep=1, seed=3, messages=[{"role": "user", "content": "x"}],
                expected=["7654321"], token_count=500)
    with Store(path) as store:
        store.ensure_run("r", model="m", tokenizer="t", family="niah", version="0", spec={}, meta={})
        store.save_case("r", case)
        store.save_response("r", case.case_id, StoredResponse(output="no", finish_reason="stop", reported_prompt_tokens=500,
                            completion_tokens=1, latency_s=0.0, attempts=1, error=None, score=0.0,
                            outcome="wrong", detail={}))
        reader = sqlite3.connect(path)
        try:
            assert reader.execute("SELECT outcome FROM responses").fetchall() == [("wrong",)]
        finally:
            reader.close()


def _case(depth: float):
    from ctxprobe.core.case import Case, Cell

    return Case(cell=Cell("niah", 512, depth), rep=0, seed=3, messages=[{"role": "user", "content": f"x{depth}"}],
                expected=["7654321"], token_count=500)


def _respond(store: Store, run_id: str, case_id: str, outcome: str, cost: float | None = None) -> None:
    store.save_response(run_id, case_id, StoredResponse(output=None if outcome == "error" else "7654321", finish_reason="stop",
                        reported_prompt_tokens=500, completion_tokens=1, latency_s=0.0, attempts=1,
                        error="boom" if outcome == "error" else None, score=None if outcome == "error" else 1.0,
                        outcome=outcome, detail={}, cost_usd=cost))


def test_a_retried_error_is_replaced_by_its_answer(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.ensure_run("r", model="m", tokenizer="t", family="niah", version="0", spec={}, meta={})
        case = _case(0.0)
        store.save_case("r", case)
        _respond(store, "r", case.case_id, "error")
        assert store.done_case_ids("r") == set()  # an error is retried on resume...
        _respond(store, "r", case.case_id, "correct")  # ...and its answer takes the row
        assert store.done_case_ids("r") == {case.case_id}
        assert [(r.outcome, r.score) for r in store.result_rows("r")] == [("correct", 1.0)]


def test_spent_sums_costs_and_is_zero_before_any_response(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.ensure_run("r", model="m", tokenizer="t", family="niah", version="0", spec={}, meta={})
        assert store.spent("r") == 0.0
        a, b = _case(0.0), _case(1.0)
        store.save_case("r", a)
        store.save_case("r", b)
        _respond(store, "r", a.case_id, "correct", cost=0.25)
        _respond(store, "r", b.case_id, "correct", cost=None)  # a free response adds nothing
        assert store.spent("r") == 0.25


def test_response_for_an_unknown_case_is_refused(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.ensure_run("r", model="m", tokenizer="t", family="niah", version="0", spec={}, meta={})
        with pytest.raises(sqlite3.IntegrityError):
            _respond(store, "r", "niah/L512/d0.5/r9", "correct")


def test_an_ambiguous_run_prefix_is_a_one_line_error(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        for run_id in ("abc1", "abc2"):
            store.ensure_run(run_id, model="m", tokenizer="t", family="niah", version="0", spec={}, meta={})
        with pytest.raises(CtxprobeError, match="ambiguous"):
            store.get_run("abc")
        assert store.get_run("abc2").run_id == "abc2"
