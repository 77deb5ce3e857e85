"""Run ids (and the cases a run holds) stay the same across refactors of the code layout:
a rerun of an unchanged spec must resume its stored run, never start a new one.

The run ids and case ids below were computed from commit b7405e5 (before the modules were moved
into the pipeline's folders), with the same calls as here. A change of the run
identity on purpose (a new identity field, a new ctxprobe version) updates them with a note.

The prompts themselves are pinned too, as built since the budget-driven packer (main 0d428ce):
its fill tolerance changed 12 of these 16 prompts (b7405e5: digest fef7f6c62947dc71) while
run and case ids stayed the same, so a run stored before it and resumed after it holds
prompts of both builders. A builder change that alters prompts must update this digest on
purpose, and say what it means for resumed runs.

The builder then placed each insert at its depth of the haystack *without* the insert (as RULER
places a needle and as the realised depth was always recorded), where it had been placed
over the haystack with it: prompts at middle depths moved by at most one sentence (depths
0 and 1 are unchanged; the packer's digest before that: 811c0e35e8a822ac). Run and case ids stay
the same, so a run resumed across this change holds middle-depth prompts of both rules."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

import ctxprobe
from ctxprobe.sweep.run import run_id_for


# Since the default repetitions follow the bar (24 cases a length at 0.856: 5 reps over the
# default 5 depths, 24 over one), these specs name the old default, ``reps: 3``: a spec that
# gives its reps keeps the id it always had. A spec without reps has a new id (last entry).
@pytest.mark.parametrize("spec, run_id", [
    ({"model": "sim:perfect", "reps": 3}, "f2504807b91a"),
    ({"model": "openai:gpt-4o-mini", "families": "niah,multihop", "lengths": "4k,8k", "reps": 3}, "e6e58f19de58"),
    ({"model": "sim:decay", "families": {"phonebook": {}}, "depths": [0], "reps": 3}, "3444b23fbb02"),
    ({"model": "sim:perfect"}, "85a3e9aecaed"),  # reps 5, derived
])
def test_run_id_of_a_fixed_spec_is_pinned(spec: dict, run_id: str) -> None:
    assert run_id_for(ctxprobe.make_spec(spec)) == run_id


def _digest(items: list[str]) -> str:
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()[:16]


def test_a_stored_sweep_keeps_its_run_id_and_its_cases(tmp_path) -> None:
    spec = ctxprobe.make_spec({"model": "sim:perfect", "families": {"niah": {"distractors": 2}, "vartrack": {}},
                               "lengths": "1k,2k", "depths": [0.25, 0.75], "reps": 2, "seed": 7})
    store = tmp_path / "s.sqlite"
    result = ctxprobe.run_sweep(spec, store, progress=False)
    assert result.run_id == "228d66fc189e"
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT case_id, prompt_hash FROM cases WHERE run_id = ? ORDER BY case_id",
                          (result.run_id,)).fetchall()
    assert len(rows) == 16
    # every case id as b7405e5 built it
    assert _digest([case_id for case_id, _ in rows]) == "9c5acb654716207a"
    # every prompt byte for byte (prompt_hash), as the placement at the depth without the insert builds it
    assert _digest([case_id + prompt for case_id, prompt in rows]) == "2358c96d5b4dff96"
    # and a rerun resumes it: nothing new is sent
    again = ctxprobe.run_sweep(spec, store, progress=False)
    assert again.run_id == result.run_id and again.resumed and again.sent == 0 and again.already_done == 16
