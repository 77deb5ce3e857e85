"""The case builder is part of a case's identity: a run resumed after the builder changed
its prompts is refused (one line, the way out named), nothing stored is lost, and run ids
stay what they were. compare/check on runs that cannot pair say why and what to do."""

from __future__ import annotations

import json
import sqlite3

import pytest

import ctxprobe
import ctxprobe.families.niah.task as niah
from ctxprobe.cases.builder import BUILDER_VERSION
from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.grid import planned_cases
from ctxprobe.report.compare_runs import compare_runs

SPEC = {"model": "sim:perfect", "lengths": "1k", "depths": [0.25, 0.75], "reps": 2, "seed": 3}


def _spec(**over: object) -> ctxprobe.Spec:
    return ctxprobe.make_spec({**SPEC, **over})


def _first_half(store, spec=None):
    """A run with only some of its cases sent (as after Ctrl-C): the rest is pending."""
    spec = spec or _spec()
    plan = list(planned_cases(spec))
    return ctxprobe.run_sweep(spec, store, progress=False, planned=plan[:2])


def _meta(store, run_id: str) -> dict:
    with sqlite3.connect(store) as db:
        return json.loads(db.execute("SELECT meta_json FROM runs WHERE run_id=?", (run_id,)).fetchone()[0])


def _set_meta(store, run_id: str, meta: dict) -> None:
    with sqlite3.connect(store) as db:
        db.execute("UPDATE runs SET meta_json=? WHERE run_id=?", (json.dumps(meta), run_id))


def _stored(store, run_id: str) -> list[tuple]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT c.case_id, c.prompt_hash, s.output FROM cases c JOIN responses s USING (run_id, case_id)"
                          " WHERE c.run_id=? ORDER BY c.case_id", (run_id,)).fetchall()


def test_a_new_run_records_the_builder_version(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    r = ctxprobe.run_sweep(_spec(), store, progress=False)
    assert _meta(store, r.run_id)["builder_version"] == BUILDER_VERSION


def test_resume_with_the_same_builder_continues(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    first = _first_half(store)
    again = ctxprobe.run_sweep(_spec(), store, progress=False)
    assert again.run_id == first.run_id and again.resumed and again.sent == 2 and again.already_done == 2


def test_resume_of_a_run_stored_by_another_builder_version_is_refused(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    first = _first_half(store)
    meta = _meta(store, first.run_id)
    _set_meta(store, first.run_id, {**meta, "builder_version": BUILDER_VERSION - 1})
    before = _stored(store, first.run_id)
    with pytest.raises(CtxprobeError) as err:
        ctxprobe.run_sweep(_spec(), store, progress=False)
    msg = str(err.value)
    assert "\n" not in msg
    assert f"case builder {BUILDER_VERSION - 1}" in msg and f"builder is {BUILDER_VERSION}" in msg
    assert f"ctxprobe export {first.run_id} --jsonl" in msg and "run --cases" in msg and "--store" in msg
    assert _stored(store, first.run_id) == before  # nothing stored is lost or added


def test_a_run_from_before_versions_whose_prompts_now_differ_is_refused(tmp_path, monkeypatch) -> None:
    """An old run (no version recorded) and a family text that changed since: the rebuilt
    stored case has another prompt hash."""
    store = tmp_path / "s.sqlite"
    first = _first_half(store)
    meta = _meta(store, first.run_id)
    del meta["builder_version"]
    _set_meta(store, first.run_id, meta)
    monkeypatch.setattr(niah, "QUESTION", niah.QUESTION.replace("Answer with the number only.",
                                                                "Reply with the number alone."))
    with pytest.raises(CtxprobeError, match=r"stored case niah/L1024/d0\.25/r0 \(built by an earlier case builder\) "
                                            r"would now be built with a different prompt"):
        ctxprobe.run_sweep(_spec(), store, progress=False)
    assert "builder_version" not in _meta(store, first.run_id)  # not stamped as if it matched


def test_a_run_from_before_versions_with_the_same_prompts_resumes_and_is_stamped(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    first = _first_half(store)
    meta = _meta(store, first.run_id)
    del meta["builder_version"]
    _set_meta(store, first.run_id, meta)
    again = ctxprobe.run_sweep(_spec(), store, progress=False)
    assert again.sent == 2
    assert _meta(store, first.run_id)["builder_version"] == BUILDER_VERSION


def test_a_forgotten_version_bump_is_caught_by_the_prompt_hash(tmp_path, monkeypatch) -> None:
    store = tmp_path / "s.sqlite"
    first = _first_half(store)
    monkeypatch.setattr(niah, "QUESTION", niah.QUESTION + " ")
    with pytest.raises(CtxprobeError, match=f"run {first.run_id} cannot be resumed"):
        ctxprobe.run_sweep(_spec(), store, progress=False)


def test_a_complete_run_is_not_refused_nothing_is_left_to_mix(tmp_path) -> None:
    """Rerunning a finished command reprints its report whatever the builder: nothing is sent."""
    store = tmp_path / "s.sqlite"
    r = ctxprobe.run_sweep(_spec(), store, progress=False)
    _set_meta(store, r.run_id, {**_meta(store, r.run_id), "builder_version": BUILDER_VERSION + 1})
    again = ctxprobe.run_sweep(_spec(), store, progress=False)
    assert again.sent == 0 and again.already_done == 4


def test_the_builder_version_is_not_part_of_the_run_id(tmp_path, monkeypatch) -> None:
    import ctxprobe.cases.builder as builder
    from ctxprobe.sweep.run import run_id_for

    before = run_id_for(_spec())
    monkeypatch.setattr(builder, "BUILDER_VERSION", BUILDER_VERSION + 1)
    assert run_id_for(_spec()) == before


def test_compare_of_runs_with_different_seeds_says_why_and_what_to_do(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    a = ctxprobe.run_sweep(_spec(), store, progress=False)
    b = ctxprobe.run_sweep(_spec(seed=4), store, progress=False)
    with pytest.raises(CtxprobeError) as err:
        compare_runs(a.run_id, b.run_id, store)
    msg = str(err.value)
    assert "seed 3 vs 4" in msg
    assert f"ctxprobe export {a.run_id} --jsonl" in msg and f"run --cases {a.run_id}.jsonl --model sim:perfect" in msg


def test_compare_across_builders_names_the_builders(tmp_path, monkeypatch) -> None:
    """Two stores, one spec: the second built after a (simulated) builder change."""
    a = ctxprobe.run_sweep(_spec(), tmp_path / "a.sqlite", progress=False)
    monkeypatch.setattr(niah, "QUESTION", niah.QUESTION + " Be brief.")
    import ctxprobe.cases.identity as identity

    monkeypatch.setattr(identity, "BUILDER_VERSION", BUILDER_VERSION + 1)
    b = ctxprobe.run_sweep(_spec(), tmp_path / "b.sqlite", progress=False)
    assert a.run_id == b.run_id
    with pytest.raises(CtxprobeError, match=rf"case builder {BUILDER_VERSION} vs {BUILDER_VERSION + 1}"):
        compare_runs(a.run_id, b.run_id, tmp_path / "a.sqlite", store_b=tmp_path / "b.sqlite")


def test_compare_of_runs_sharing_no_case_names_the_difference(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    a = ctxprobe.run_sweep(_spec(), store, progress=False)
    b = ctxprobe.run_sweep(_spec(lengths="2k"), store, progress=False)
    with pytest.raises(CtxprobeError, match=r"share no case \(.*lengths \[1024\] vs \[2048\]"):
        compare_runs(a.run_id, b.run_id, store)
