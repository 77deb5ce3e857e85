"""Parallel case building: identical to the serial build, in plan order; the
prefix-sharing switch; the memory gate and slimmed cases through the real store."""

from __future__ import annotations

import array
import gc

from ctxprobe.plan.grid import planned_cases
from ctxprobe.store import iter_export
from ctxprobe.cases.memory import MemoryGate, slim_case
from ctxprobe.cases.builder import build_cases, generation_seed
from ctxprobe.sweep.standalone import run_cases
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell


def _spec(**extra):
    return make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "512,1k", "depths": "0,0.5,1",
                      "reps": 2, "families": {"niah": {"distractors": 2}, "vartrack": {}}, **extra})


def _key(case):
    return (case.to_dict(), list(case.prompt_ids or []))


def test_parallel_build_is_identical_and_ordered() -> None:
    spec = _spec()
    planned = list(planned_cases(spec))
    serial = [_key(c) for c in build_cases(spec, planned, workers=1)]
    parallel = [_key(c) for c in build_cases(spec, planned, workers=2, lookahead=1)]
    assert [c[0]["case_id"] for c in parallel] == [p.case_id for p in planned]
    assert parallel == serial
    # workers hand back compact ids: lists again for a consumer that keeps them (the
    # default, e.g. llama.cpp), 4-byte arrays for one that compacts them (sims), same values
    kept = list(build_cases(spec, planned[:3], workers=2))
    compact = list(build_cases(spec, planned[:3], workers=2, ids="compact"))
    assert all(type(c.prompt_ids) is list for c in kept)
    assert all(isinstance(c.prompt_ids, array.array) and c.prompt_ids.itemsize == 4 for c in compact)
    assert [list(c.prompt_ids) for c in compact] == [c.prompt_ids for c in kept] == [k[1] for k in serial[:3]]


def test_closing_early_stops_the_pool() -> None:
    spec = _spec()
    stream = build_cases(spec, list(planned_cases(spec)), workers=2)
    first = next(stream)
    stream.close()  # must not hang or leak workers
    assert first.case_id == next(iter(planned_cases(spec))).case_id


def test_sharing_switch(tmp_path) -> None:
    spec = _spec()
    group = [p for p in planned_cases(spec) if p.cell.length == 512 and p.rep == 0 and p.cell.family == "niah"]
    shared = list(build_cases(spec, group))
    assert len({c.seed for c in shared}) == 1  # one group seed: shared filler, keys, values
    cells = [Cell("niah", 512, d) for d in (0.0, 0.5, 1.0)]
    assert len({generation_seed(0, c, share_prefix=False) for c in cells}) == 3
    assert generation_seed(0, cells[0]) == 0  # shared: stored cases stay what they were
    # independent cases: own seeds, different filler; the run records which mode built them
    result = run_cases(spec, tmp_path / "i.sqlite", planned=group, share_prefix=False)
    rows = list(iter_export(result.run_id, tmp_path / "i.sqlite"))
    assert len({r["seed"] for r in rows}) == 3
    assert len({r["messages"][-1]["content"][:400] for r in rows}) == 3
    from ctxprobe.store import Store

    with Store(tmp_path / "i.sqlite") as store:
        assert store.require_run(result.run_id).meta.prefix_sharing == "independent"


def test_gate_bounds_live_tokens_and_slim_ids() -> None:
    spec = _spec()
    gate = MemoryGate(max_tokens=1500, timeout=5)
    held = []
    for case in gate.wrap(build_cases(spec, list(planned_cases(spec))[:6])):
        slim_case(case, "compact")
        assert isinstance(case.prompt_ids, array.array)
        held.append(case)
        if len(held) > 1:
            held.pop(0)  # the consumer lets go of old cases: the gate admits the next
        gc.collect()
    assert gate.peak_tokens <= 1500 + 1024 and gate.overruns == 0


def test_standalone_matches_sweep(tmp_path) -> None:
    spec = _spec()
    a = run_sweep(spec, tmp_path / "a.sqlite", progress=False)
    b = run_cases(spec, tmp_path / "b.sqlite", build_workers=2, live_tokens=3000)
    assert a.run_id == b.run_id and b.stored == 24

    def rows(path, run_id):
        return {r["case_id"]: (r["prompt_hash"], r["outcome"], r["output"]) for r in iter_export(run_id, path)}

    assert rows(tmp_path / "a.sqlite", a.run_id) == rows(tmp_path / "b.sqlite", b.run_id)


def test_plan_order_hits_a_prefix_cache(tmp_path) -> None:
    """Through a loopback sim server with llama.cpp-style accounting: each depth of a group
    reuses the prompt before its needle; a shuffled order reuses far less."""
    import random

    from ctxprobe.models import resolve_provider
    from ctxprobe.sim.prefix_cache import PrefixCacheAccount, PrefixCacheSimServer
    from ctxprobe.tokenizers import resolve_tokenizer

    acct = PrefixCacheAccount()
    assert [acct.observe(x).cached_tokens for x in ([1, 2, 3], [1, 2, 4, 5], [1, 2, 4, 5], [9])] == [0, 2, 3, 0]
    tok = resolve_tokenizer("local")
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "512,1k",
                      "depths": "0,0.25,0.5,0.75,1", "reps": 1})
    plan = list(planned_cases(spec))
    shuffled = random.Random(1).sample(plan, len(plan))
    computed = {}
    for name, order in (("plan", plan), ("random", shuffled)):
        with PrefixCacheSimServer(resolve_provider("sim:perfect", tok), tok) as server:
            url = server.start()
            http = make_spec({**spec.model_dump(), "model": f"openai-compat:sim@{url}", "concurrency": 1})
            run_cases(http, tmp_path / f"{name}.sqlite", planned=order)
            computed[name] = server.cache.computed_tokens / server.cache.prompt_tokens
    assert computed["plan"] < 0.72 and computed["plan"] < computed["random"] - 0.1
