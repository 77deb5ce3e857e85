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
