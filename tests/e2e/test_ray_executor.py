"""The Ray executor on a local Ray instance started here (loopback only):
a Ray run stores exactly what a local run stores, and killing a Ray worker mid-run loses
nothing."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time

import pytest

ray = pytest.importorskip("ray")

from ctxprobe.store import iter_export  # noqa: E402
from ctxprobe.runner.ray_executor import execute_ray  # noqa: E402
from ctxprobe.sweep.standalone import run_cases  # noqa: E402
from ctxprobe.spec import make_spec  # noqa: E402
from ctxprobe.sweep.run import run_sweep  # noqa: E402

pytestmark = pytest.mark.slow  # a Ray start costs ~10-20 s here


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def _spec(model: str, **extra):
    return make_spec({"model": model, "tokenizer": "local", "lengths": "512,1k", "depths": "0,0.5,1", "reps": 2,
                      "families": {"niah": {"distractors": 2}}, "concurrency": 3, **extra})


def _stored(path, run_id):
    return {r["case_id"]: (r["prompt_hash"], r["outcome"], r["score"], r["output"], r["reported_prompt_tokens"])
            for r in iter_export(run_id, path)}


def test_ray_run_equals_local_run(tmp_path, local_ray) -> None:
    spec = _spec("sim:decay?cliff=600&width=800&noise=0.1&seed=3")
    local = run_sweep(spec, tmp_path / "local.sqlite", progress=False)  # the real sweep path
    distributed = run_cases(spec, tmp_path / "ray.sqlite", executor=execute_ray)
    assert distributed.run_id == local.run_id and distributed.stored == 12
    a, b = _stored(tmp_path / "local.sqlite", local.run_id), _stored(tmp_path / "ray.sqlite", distributed.run_id)
    assert a == b
    assert {v[1] for v in a.values()} >= {"correct"} and len({v[1] for v in a.values()}) > 1  # not trivial


def _count(path) -> int:
    try:
        db = sqlite3.connect(path, timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM responses WHERE outcome != 'error'").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_killing_a_worker_loses_nothing(tmp_path, local_ray) -> None:
    store = tmp_path / "k.sqlite"
    spec = _spec("sim:perfect?latency=0.4", reps=3, retries=3)  # 18 cases
    killed: list[int] = []

    def on_start(pool) -> None:
        pids = pool.pids()

        def killer() -> None:
            deadline = time.monotonic() + 60
            while _count(store) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(pids[0], signal.SIGKILL)  # mid-run: requests are in flight on it
            killed.append(pids[0])

        threading.Thread(target=killer, daemon=True).start()

    async def executor(*args, **kwargs):
        return await execute_ray(*args, replicas=2, on_start=on_start, **kwargs)

    first = run_cases(spec, store, executor=executor)
    assert killed, "the worker was never killed"
    again = run_cases(spec, store, executor=execute_ray)  # resume: sends only what is missing
    assert again.stored == 18 and again.run_id == first.run_id
    assert first.sent + again.sent >= 18 and again.already_done == first.stored
    outcomes = {v[1] for v in _stored(store, first.run_id).values()}
    assert outcomes == {"correct"}


def test_a_prefix_chain_stays_on_one_actor_endpoint_and_slot(tmp_path, local_ray) -> None:
    """Three servers of two slots behind three actors, two lanes: every chain's cases reach
    one server, deepest first, on the slot its lane names (the actor learnt the server's
    slots); the least-busy actor would have split chains across servers."""
    from ctxprobe.models import resolve_provider
    from ctxprobe.sim.prefix_cache import PrefixCacheSimServer
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")
    servers = {name: PrefixCacheSimServer(resolve_provider("sim:perfect", tok), tok, slots=2) for name in "abc"}
    try:
        models = [f"openai-compat:m@{servers[name].start()}" for name in "abc"]
        spec = make_spec({"model": models[0], "endpoints": models, "executor": "ray", "tokenizer": "local",
                          "lengths": "512,1k", "depths": "0,0.5,1", "reps": 2, "decoding": {"max_tokens": 8},
                          "concurrency": 2})  # 2 lanes (server a's /props, at most the concurrency)
        result = run_sweep(spec, tmp_path / "r.sqlite", progress=False)
        records = list(iter_export(result.run_id, tmp_path / "r.sqlite"))
        served = {name: list(server.cache.records) for name, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()
    where = {tuple(tok.encode_chat(r["messages"])): (r["length"], r["rep"], r["depth"]) for r in records}
    chains: dict[tuple[int, int], list[tuple[str, int, float]]] = {}
    for name, recs in served.items():
        for r in recs:
            if r.ids in where:
                length, rep, depth = where[r.ids]
                chains.setdefault((length, rep), []).append((name, r.slot, depth))
    assert len(records) == 12 and sum(len(c) for c in chains.values()) == 12 and len(chains) == 4
    for chain, sends in chains.items():
        assert len({(name, slot) for name, slot, _ in sends}) == 1, (chain, sends)  # one server, one slot
        assert [d for _, _, d in sends] == [1.0, 0.5, 0.0], (chain, sends)  # deepest first
    # lane 0 on actor 0 (server a) names slot 0, lane 1 on actor 1 (server b) slot 1; c is idle
    assert {(name, slot) for sends in chains.values() for name, slot, _ in sends} == {("a", 0), ("b", 1)}
