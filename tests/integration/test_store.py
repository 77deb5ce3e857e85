from __future__ import annotations

import sqlite3

import pytest

from ctxprobe.core.records import StoredResponse
from ctxprobe.errors import CtxprobeError
from ctxprobe.store import Store
from ctxprobe.store.migrations import MIGRATIONS
from ctxprobe.core.case import Case, Cell


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
        store.save_response("abc123", a.case_id, StoredResponse(output="1234567", finish_reason="stop", reported_prompt_tokens=1000,
                            completion_tokens=3, latency_s=0.1, attempts=1, error=None, score=1.0,
                            outcome="correct", detail={}))
        store.save_response("abc123", b.case_id, StoredResponse(output=None, finish_reason=None, reported_prompt_tokens=None,
                            completion_tokens=None, latency_s=None, attempts=5, error="boom", score=None,
                            outcome="error", detail={}))
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


def test_a_missing_folder_is_named_and_nothing_is_created(tmp_path) -> None:
    with pytest.raises(CtxprobeError) as info:
        Store(tmp_path / "no" / "s.sqlite")
    assert f"its folder {tmp_path / 'no'} does not exist" in str(info.value)
    assert not (tmp_path / "no").exists()


def _file_state(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest(), sorted(p.name for p in path.parent.iterdir())


def test_another_programs_sqlite_file_is_refused_untouched(tmp_path) -> None:
    """Even one with a `runs` table: no _migrations table is created in it, no WAL mode set."""
    import sqlite3

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE runs (x)")
        db.execute("INSERT INTO runs VALUES (1)")
    db.close()
    before = _file_state(other)
    for opener in (lambda: Store(other), _read_only(other)):
        with pytest.raises(CtxprobeError) as info:
            opener()
        assert "no ctxprobe store" in str(info.value) and "\n" not in str(info.value)
    assert _file_state(other) == before


def _read_only(path):
    from ctxprobe.store.db import reading_only

    def open_it() -> None:
        with reading_only():
            Store(path)
    return open_it


def test_a_corrupt_store_is_one_line_and_left_as_is(tmp_path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"garbage, not SQLite " * 300)
    before = _file_state(bad)
    with pytest.raises(CtxprobeError) as info:
        Store(bad)
    assert "file is not a database (the file is left as is)" in str(info.value) and "\n" not in str(info.value)
    assert _file_state(bad) == before


def test_an_empty_file_becomes_a_store(tmp_path) -> None:
    (tmp_path / "new.sqlite").touch()  # a placeholder made by `touch` is no other program's file
    with Store(tmp_path / "new.sqlite") as store:
        assert store.db.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_missing_run_message(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(CtxprobeError, match="ctxprobe runs"):
            store.require_run("nope")


# -- what a run record and the per-run queries report ---------------------------------------

def _run(store: Store, run_id: str = "r", meta: dict | None = None) -> None:
    store.ensure_run(run_id, model="m", tokenizer="t", family="niah", version="0", spec={"s": 1}, meta=meta or {})


def _respond(store: Store, case: Case, outcome: str, *, reported: int | None = 1000, cached: int | None = None,
             cost: float | None = None) -> bool:
    return store.save_response("r", case.case_id, StoredResponse(output=None if outcome == "error" else "1234567",
                               finish_reason="stop", reported_prompt_tokens=reported, completion_tokens=1,
                               latency_s=0.0, attempts=1, error="boom" if outcome == "error" else None,
                               score=None if outcome == "error" else (1.0 if outcome == "correct" else 0.0),
                               outcome=outcome, detail={}, cost_usd=cost, cached_prompt_tokens=cached))


def test_run_record_counts_and_status(tmp_path) -> None:
    from ctxprobe.store.claims import Coordinator

    with Store(tmp_path / "s.sqlite") as store:
        _run(store, meta={"planned_cases": 5})
        a, b, c = _case(0.0), _case(0.5), _case(1.0)
        for case in (a, b, c):
            store.save_case("r", case)
        assert _respond(store, a, "correct") is True
        assert _respond(store, b, "error") is True
        run = store.get_run("r")
        assert (run.n_cases, run.n_responses, run.n_final, run.n_planned) == (3, 2, 1, 5)
        assert (run.model, run.tokenizer, run.family, run.spec, run.meta.to_json()) == ("m", "t", "niah", {"s": 1},
                                                                                        {"planned_cases": 5})
        assert run.status == "interrupted"  # stored as running, and no process holds it
        coord = Coordinator(tmp_path / "s.sqlite", "r").start(heartbeat=False)
        try:
            assert store.get_run("r").status == "running"  # a live session holds it
        finally:
            coord.end()
        store.update_run("r", status="done", meta={"extra": 1})
        run = store.get_run("r")
        assert run.status == "done" and run.meta.to_json() == {"extra": 1, "planned_cases": 5}
        assert store.case_ids("r") == {a.case_id, b.case_id, c.case_id}
        assert store.outcome_counts("r") == {"correct": 1, "error": 1}
        # a final answer is kept, whatever arrives later; an error is replaced
        assert _respond(store, a, "wrong") is False
        assert _respond(store, b, "correct") is True
        assert store.outcome_counts("r") == {"correct": 2}


def test_planned_cases_fall_back_to_the_built_ones(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        _run(store, meta={"planned_cases": "5"})  # not an int: an older or foreign run
        store.save_case("r", _case(0.0))
        assert store.get_run("r").n_planned == 1
        _run(store, "q")
        assert store.get_run("q").n_planned == 0


def test_an_exact_run_id_wins_over_longer_ids_it_prefixes(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        for run_id in ("abc", "abcd", "abce"):
            _run(store, run_id)
        assert store.get_run("abc").run_id == "abc"
        assert store.get_run("abcd").run_id == "abcd"
        assert store.get_run("zzz") is None
        assert [r.run_id for r in store.list_runs()] == ["abc", "abcd", "abce"]


@pytest.mark.parametrize(("built", "reported", "over"), [
    (600, 604, False),  # 4 over: the slack of 4 tokens (0.5% of 600 is 3)
    (600, 605, True),
    (1000, 1005, False),  # 0.5% of 1000 = 5
    (1000, 1006, True),
    (2000, 2010, False),  # 0.5% of 2000 = 10
    (2000, 2011, True),
    (1999, 2008, False),  # int(0.5% of 1999) = 9
    (1999, 2009, True),
    (1000, 900, False),  # under is truncation, not an overcount
])
def test_prompt_overcounts_one_token_either_side_of_the_slack(tmp_path, built: int, reported: int,
                                                              over: bool) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        _run(store)
        case = Case(cell=Cell("niah", built, 0.5), rep=0, seed=7, messages=[{"role": "user", "content": "hi"}],
                    expected=["1234567"], token_count=built)
        store.save_case("r", case)
        _respond(store, case, "correct", reported=reported)
        assert store.prompt_overcounts("r") == ((1, reported - built) if over else (0, 0))


def test_cache_totals_count_only_responses_that_report_a_cache_figure(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        _run(store)
        a, b, c = _case(0.0), _case(0.5), _case(1.0)
        for case in (a, b, c):
            store.save_case("r", case)
        assert store.cache_totals("r") == (0, 0, 0)
        _respond(store, a, "correct", reported=1010, cached=600)
        _respond(store, b, "correct", reported=None, cached=0)  # no prompt count: the built 1000
        _respond(store, c, "correct", reported=1020, cached=None)
        assert store.cache_totals("r") == (600, 2, 2010)


def test_an_empty_run_counts_zero_everywhere(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        _run(store)
        run = store.get_run("r")
        assert (run.n_cases, run.n_responses, run.n_final, run.n_planned) == (0, 0, 0, 0)
        assert store.case_ids("r") == set() and store.done_case_ids("r") == set()
        assert store.outcome_counts("r") == {} and store.spent("r") == 0.0


def test_run_record_is_immutable_and_counts_default_to_zero() -> None:
    import dataclasses

    from ctxprobe.store import RunMeta
    from ctxprobe.store.db import RunRecord

    rec = RunRecord("r", "t0", "t1", "m", "t", "niah", "0", {}, RunMeta(), "running")
    assert (rec.n_cases, rec.n_responses, rec.n_planned, rec.n_final) == (0, 0, 0, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.status = "complete"  # type: ignore[misc]


def test_text_is_stored_as_itself_not_escaped(tmp_path) -> None:
    """Prompts, metadata and details keep non-ASCII text readable in the SQLite file."""
    with Store(tmp_path / "s.sqlite") as store:
        _run(store)
        case = Case(cell=Cell("niah", 1024, 0.5), rep=0, seed=7, messages=[{"role": "user", "content": "café 東京"}],
                    expected=["1234567"], meta={"doc": "naïve"}, token_count=1000)
        store.save_case("r", case)
        store.save_response("r", case.case_id, StoredResponse(output="x", finish_reason="stop", reported_prompt_tokens=1000,
                            completion_tokens=1, latency_s=0.0, attempts=1, error=None, score=0.0, outcome="wrong",
                            detail={"note": "größer"}))
        raw = store.db.execute("SELECT p.messages_json, c.meta_json, s.detail_json FROM prompts p JOIN cases c"
                               " USING (prompt_hash) JOIN responses s USING (run_id, case_id)").fetchone()
        assert "café 東京" in raw[0] and "naïve" in raw[1] and "größer" in raw[2]


def test_the_store_waits_30_s_for_another_process_lock(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000


def test_sample_case_is_the_shortest_then_lowest_rep_then_depth(tmp_path) -> None:
    """The case rebuilt to check a stored run is the cheapest: ordered by length, then
    repetition, then depth, then id; each field of the tuple is its own column."""
    with Store(tmp_path / "s.sqlite") as store:
        _run(store)
        assert store.sample_case("r") is None

        def case(length: int, rep: int, depth: float, family: str = "niah") -> Case:
            return Case(cell=Cell(family, length, depth), rep=rep, seed=3, messages=[{"role": "user", "content": f"{length}"}],
                        expected=["1"], token_count=length - 7)

        cases = [case(2048, 0, 0.0), case(1024, 2, 0.0), case(1024, 1, 0.75, "multihop"), case(1024, 1, 0.25)]
        for c in cases:
            store.save_case("r", c)
        want = cases[3]
        got = store.sample_case("r")
        assert got == (want.case_id, "niah", 1024, 0.25, 1, want.prompt_hash)
        assert isinstance(got[2], int) and isinstance(got[3], float) and isinstance(got[4], int)
        assert store.sample_case("other") is None


def test_billing_sums_each_column_apart_and_leaves_out_errors(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        _run(store)
        a, b, c, d = _case(0.0), _case(0.25), _case(0.5), _case(1.0)
        for case in (a, b, c, d):
            store.save_case("r", case)
        assert store.billing("r") == (0.0, 0, 0, 0, 0)
        for case, reported, cached, written, cost in ((a, 1010, 600, 30, 0.25), (b, None, None, 7, 0.5),
                                                      (c, 1020, 5, None, None)):
            store.save_response("r", case.case_id, StoredResponse(
                output="1234567", finish_reason="stop", reported_prompt_tokens=reported, completion_tokens=1,
                latency_s=0.0, attempts=1, error=None, score=1.0, outcome="correct", detail={}, cost_usd=cost,
                cached_prompt_tokens=cached, cache_write_tokens=written))
        _respond(store, d, "error", reported=5000, cached=4000, cost=9.0)  # an error is never billed here
        usd, prompt, read, wrote, priced = store.billing("r")
        assert usd == pytest.approx(0.75)
        assert prompt == 1010 + 1000 + 1020  # b reported none: the built 1000
        assert (read, wrote, priced) == (605, 37, 2)
        assert isinstance(usd, float) and all(isinstance(x, int) for x in (prompt, read, wrote, priced))
        assert store.spent("r") == pytest.approx(9.75)  # spent counts what was paid, errors included


def test_update_run_merges_meta_keeping_the_stored_keys(tmp_path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        _run(store, meta={"planned_cases": 5})
        store.update_run("r", meta={"trained_context": 8192})
        meta = store.get_run("r").meta
        assert meta.planned_cases == 5 and meta.trained_context == 8192


def test_reading_only_opens_a_store_read_only(tmp_path) -> None:
    from ctxprobe.store.db import open_existing, reading_only

    path = tmp_path / "s.sqlite"
    with pytest.raises(CtxprobeError, match=r"^no store at .*run a sweep first"):
        open_existing(path)
    assert not path.exists()  # a read command creates nothing
    with reading_only(), pytest.raises(CtxprobeError, match=r"^no store at "):
        Store(path)
    assert not path.exists()
    with Store(path) as store:
        _run(store)
        store.save_case("r", _case())
    with reading_only(), open_existing(path) as store:
        assert store.get_run("r").run_id == "r"
        with pytest.raises(sqlite3.OperationalError, match="readonly|read-only|query_only|attempt to write"):
            store.db.execute("DELETE FROM cases")
    with Store(path) as store:  # outside reading_only(): writable again
        store.update_run("r", status="done")
        assert store.get_run("r").status == "done"


def test_reading_only_refuses_a_foreign_file_and_an_old_schema_untouched(tmp_path) -> None:
    from ctxprobe.store.db import reading_only

    foreign = tmp_path / "other.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE runs (x)")
    db.commit()
    db.close()
    before = foreign.read_bytes()
    with reading_only(), pytest.raises(CtxprobeError, match=r"is no ctxprobe store \(it has no migrations table\)"):
        Store(foreign)
    assert foreign.read_bytes() == before
    old = tmp_path / "old.sqlite"
    with Store(old) as store:
        _run(store)
    db = sqlite3.connect(old)
    last = db.execute("SELECT name FROM _migrations ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    db.execute("DELETE FROM _migrations WHERE name=?", (last,))
    db.commit()
    db.close()
    with reading_only(), pytest.raises(CtxprobeError, match=rf"not at this ctxprobe's schema \(missing {last}:"):
        Store(old)
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"not a database at all, but long enough to be read as one" * 40)
    with reading_only(), pytest.raises(CtxprobeError, match=r"^cannot read store .*broken.sqlite: "):
        Store(broken)


def test_a_foreign_file_names_its_first_five_tables(tmp_path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    for name in "fedcba":
        db.execute(f"CREATE TABLE {name} (x)")
    db.commit()
    db.close()
    with pytest.raises(CtxprobeError, match=r"other tables: a, b, c, d, e\); it is left as is"):
        Store(path)


def test_iter_export_yields_every_case_with_the_run_model_and_tokenizer(tmp_path) -> None:
    from ctxprobe.store.db import iter_export

    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        _run(store)
        a, b = _case(0.0), _case(1.0)
        store.save_case("r", a)
        store.save_case("r", b)
        _respond(store, a, "correct")
    rows = list(iter_export("r", path))
    assert sorted(r["case_id"] for r in rows) == sorted([a.case_id, b.case_id])
    assert all((r["run_id"], r["model"], r["tokenizer"]) == ("r", "m", "t") for r in rows)
