"""The run's meta is typed (``RunMeta``), written by one method and read by attribute;
stores written by the untyped format before it still load, and keep what they hold."""

from __future__ import annotations

import json
import sqlite3

import ctxprobe
from ctxprobe.report.load import load_report
from ctxprobe.store import Preflight, RunMeta, Store

#: A run's meta_json as ctxprobe wrote it before RunMeta (a sim run's, with a probe report
#: of a served model, a price plan, a judge's calibration and a key this version does not know).
OLD = {
    "chat_template_hash": "872be49dbb638044", "trained_context": None, "context_window": 4096,
    "plan": {"requests": 1, "input_tokens": 1024, "max_output_tokens": 48, "cells": 1, "cost_usd": None,
             "price_note": "for sim:perfect: add it to a price file (--prices FILE)", "seconds": None,
             "built_sizes": False, "reasoning_tokens": 0},
    "prefix_sharing": "shared", "builder_version": 3, "planned_cases": 1,
    "transport": {"concurrency": 4, "timeout": 600.0, "retries": 4, "rpm": None, "tpm": None, "max_cost": None,
                  "batch": False, "cache_prompt": "auto", "pricing": None, "slots": None},
    "preflight": {"endpoint": {"meta": {"n_ctx_train": 2048}}, "context_window": 4096, "counted_tokens": 25,
                  "reported_tokens": 25, "deterministic": True, "probe_requests": 3, "trained_context": 2048,
                  "unscaled_extension": True, "warnings": ["the server's window 4096 is past its trained 2048"]},
    "planned_cost": {"mode": "cached", "costs": {"on-demand": 0.5, "cached": 0.25, "batch": 0.2}, "as_of": "2025-06"},
    "judge_calibration": {"passed": True},
    "from_a_newer_ctxprobe": {"x": 1},
}


def _old_store(tmp_path) -> tuple[str, str]:
    store = str(tmp_path / "old.sqlite")
    spec = ctxprobe.make_spec({"model": "sim:perfect", "lengths": "1k", "depths": "0.5", "reps": 1})
    run_id = ctxprobe.run_sweep(spec, store, progress=False).run_id
    with sqlite3.connect(store) as db:
        db.execute("UPDATE runs SET meta_json=? WHERE run_id=?", (json.dumps(OLD), run_id))
    return run_id, store


def test_an_old_store_loads_typed_and_loses_nothing(tmp_path) -> None:
    run_id, store = _old_store(tmp_path)
    with Store(store) as st:
        meta = st.require_run(run_id).meta
    assert (meta.chat_template_hash, meta.context_window, meta.planned_cases, meta.builder_version) == (
        "872be49dbb638044", 4096, 1, 3)
    assert meta.trained_context is None and meta.served_trained_context == 2048  # the server's, from the probe
    assert meta.preflight == Preflight.from_json(OLD["preflight"]) and meta.preflight.unscaled_extension
    assert meta.extra == {"from_a_newer_ctxprobe": {"x": 1}}
    assert meta.to_json() == {k: v for k, v in OLD.items() if v is not None}  # read back as it was stored
    report = load_report(run_id, store)
    as_json = report.to_dict()
    assert as_json["preflight"] == OLD["preflight"] and as_json["chat_template_hash"] == "872be49dbb638044"
    assert "the server's window 4096 is past its trained 2048" in report.notes  # the probe's warning


def test_an_update_replaces_only_the_fields_it_sets(tmp_path) -> None:
    run_id, store = _old_store(tmp_path)
    with Store(store) as st:
        st.update_run(run_id, meta=RunMeta(planned_cases=7))
        meta = st.require_run(run_id).meta
    assert meta.planned_cases == 7 and meta.builder_version == 3 and meta.extra == {"from_a_newer_ctxprobe": {"x": 1}}


def test_values_of_an_unexpected_type_are_kept_as_stored() -> None:
    meta = RunMeta.from_json({"preflight": "401 from server", "trained_context": "8k", "planned_cases": True})
    assert meta.preflight is None and meta.trained_context is None and meta.planned_cases is None
    assert meta.to_json() == {"preflight": "401 from server", "trained_context": "8k", "planned_cases": True}
