"""Phone books sized in entries: their token size is known before anything is sent — the
window check refuses a book that cannot fit up front, an in-process model's context is
sized to it, and the plan counts real tokens, not entries."""

from __future__ import annotations

import sqlite3

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.grid import summarize
from ctxprobe.store import iter_export
from ctxprobe.cases.sizing import needs_building, plan_sizes
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.families.phonebook.task_grid import phonebook_spec


def test_sizes_match_the_built_cases(tmp_path) -> None:
    spec = phonebook_spec(model="sim:perfect", entries=["100", "200"], needles=[5, 10], runs=2, tokenizer="local")
    assert needs_building(spec)
    sizes = plan_sizes(spec)
    store = tmp_path / "s.sqlite"
    run = run_sweep(spec, store, progress=False)
    built: dict[int, list[int]] = {}
    for rec in iter_export(run.run_id, store):
        built.setdefault(rec["length"], []).append(rec["token_count"])
    for m in (100, 200):
        first_book = sizes[("phonebook", m)]
        assert first_book > 15 * m  # ~25 tokens an entry, nothing like m
        assert abs(max(built[m]) - first_book) <= 0.01 * first_book  # other books differ by a few names
    plan = summarize(spec, None, sizes)
    assert plan.input_tokens == sum(sizes.values()) * spec.reps and plan.built_sizes
    assert "counted by building the first book's cases, each N, and averaging" in plan.lines()[1]


def test_token_sized_specs_build_nothing() -> None:
    assert plan_sizes(make_spec({"model": "sim:perfect", "lengths": "1k,2k"})) is None
    assert plan_sizes(phonebook_spec(model="sim:perfect", lengths=["1k"], needles=[5], runs=1)) is None


def test_a_book_beyond_the_window_is_refused_before_sending(tmp_path) -> None:
    spec = phonebook_spec(model="sim:perfect?ctx=4096", entries=["50", "400"], needles=[5], runs=2,
                          tokenizer="local")
    store = tmp_path / "s.sqlite"
    with pytest.raises(CtxprobeError, match=r"phonebook length 400 \([\d,]+ tokens\) \+ \d+ output tokens exceeds"):
        run_sweep(spec, store, progress=False)
    if store.exists():  # nothing was sent, so nothing was stored
        db = sqlite3.connect(store)
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
        db.close()
