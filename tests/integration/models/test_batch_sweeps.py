"""``run --batch`` through the official SDKs against loopback batch APIs of all three providers:
every outcome label from batch results, partial failures resent as a new batch, whole
batches expired, chunking to the limits, cancel on interrupt, and no key in the store."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import arun_sweep, run_sweep

from fake_batch_apis import FAKES, BatchFake

SECRET = "sk-SENTINEL-batch-key-do-not-leak-4d2e9b"
SDK = {"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}
#: What the first sending of each request gets, by its place in its batch (resends get "ok").
FIRST = ["ok", "length", "refusal", "short_prompt", "transient", "permanent"]


@pytest.fixture(params=sorted(FAKES))
def fake(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[BatchFake]:
    provider = request.param
    pytest.importorskip(SDK[provider])
    cls, key_var, url_var = FAKES[provider]
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(key_var, SECRET)
    with cls() as server:
        monkeypatch.setenv(url_var, server.url + server.suffix)
        server.provider = provider  # type: ignore[attr-defined]
        yield server


def spec_for(fake: BatchFake, **over: Any) -> Any:
    data = {"model": f"{fake.provider}:m", "tokenizer": "local", "lengths": [512],  # type: ignore[attr-defined]
            "depths": [0, 0.5, 1], "reps": 2, "batch": True, "batch_poll": 0.01, "retries": 2}
    return make_spec({**data, **over})


def outcomes(store: Path) -> Counter[str]:
    db = sqlite3.connect(store)
    try:
        return Counter(r[0] for r in db.execute("SELECT outcome FROM responses"))
    finally:
        db.close()


def batch_rows(store: Path) -> list[tuple[str, str, int]]:
    db = sqlite3.connect(store)
    try:
        return db.execute("SELECT state, provider, round FROM batches ORDER BY created_at, round").fetchall()
    finally:
        db.close()


def test_every_label_and_partial_failures_resent(fake: BatchFake, tmp_path: Path) -> None:
    fake.policy = lambda seen, i: FIRST[i] if seen == 1 else "ok"
    store = tmp_path / "s.sqlite"
    result = run_sweep(spec_for(fake), store, progress=False)
    assert result.sent == 7  # six requests, then the transient failure once more
    assert fake.calls["create"] == 2
    assert outcomes(store) == Counter({"correct": 2, "output_truncated": 1, "refusal": 1, "input_truncated": 1,
                                       "error": 1})
    assert [r[0] for r in batch_rows(store)] == ["collected", "collected"]
    assert sorted(r[2] for r in batch_rows(store)) == [1, 2]
    db = sqlite3.connect(store)
    (error,) = db.execute("SELECT error FROM responses WHERE outcome='error'").fetchone()
    (attempts,) = db.execute("SELECT MAX(attempts) FROM responses").fetchone()
    (latency,) = db.execute("SELECT MAX(latency_s) FROM responses").fetchone()
    db.close()
    assert "permanent failure" in error and attempts == 2 and latency == 0.0
    assert "made with key ***" in error  # the server echoed the key: scrubbed before it was stored
    assert SECRET.encode() not in store.read_bytes() and SECRET[:12].encode() not in store.read_bytes()
    assert all(SECRET in k for k in fake.keys)  # every call carried the key; none of it was stored
    with Store(store) as s:
        run = s.require_run(result.run_id)
    assert run.batch is None and run.status == "incomplete"  # the permanent error stays an error


def test_whole_batch_expired_is_sent_again(fake: BatchFake, tmp_path: Path) -> None:
    fake.expire = {1}
    store = tmp_path / "s.sqlite"
    run_sweep(spec_for(fake, depths=[0, 1], reps=1), store, progress=False)
    assert fake.calls["create"] == 2
    assert outcomes(store) == Counter({"correct": 2})
    assert all(n == 1 for n in fake.answered.values()) and len(fake.answered) == 2


def test_retries_run_out(fake: BatchFake, tmp_path: Path) -> None:
    fake.policy = lambda seen, i: "transient"
    store = tmp_path / "s.sqlite"
    run_sweep(spec_for(fake, depths=[0], reps=1, retries=1), store, progress=False)
    assert fake.calls["create"] == 2  # the first batch, one resend
    assert outcomes(store) == Counter({"error": 1})


def test_interrupt_asks_once_and_cancels(fake: BatchFake, tmp_path: Path) -> None:
    """Ctrl-C while a batch waits: confirmed, the provider's batch is cancelled; a rerun
    collects it (nothing answered) and sends its requests in a new batch."""
    fake.hold.set()
    store = tmp_path / "s.sqlite"
    asked: list[str] = []

    async def interrupted() -> None:
        task = asyncio.create_task(arun_sweep(spec_for(fake, depths=[0, 1], reps=1), store, progress=False,
                                              confirm_cancel=lambda q: asked.append(q) or True))
        while fake.calls["retrieve"] < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert len(asked) == 1 and "cancel 1" in asked[0]
    assert fake.calls["cancel"] == 1
    with Store(store) as s:
        (run,) = s.list_runs()
    assert run.status == "waiting" and run.batch  # the cancelled batch is still to be collected
    fake.hold.clear()
    run_sweep(spec_for(fake, depths=[0, 1], reps=1), store, progress=False)
    assert fake.calls["create"] == 2 and fake.calls["cancel"] == 1
    assert outcomes(store) == Counter({"correct": 2})


def test_interrupt_without_a_terminal_leaves_the_batch_running(fake: BatchFake, tmp_path: Path) -> None:
    fake.hold.set()
    store = tmp_path / "s.sqlite"

    async def interrupted() -> None:
        task = asyncio.create_task(arun_sweep(spec_for(fake, depths=[0], reps=1), store, progress=False))
        while fake.calls["retrieve"] < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert fake.calls["cancel"] == 0
    with pytest.raises(CtxprobeError, match="has provider batches waiting .*: rerun with --batch"):
        run_sweep(spec_for(fake, depths=[0], reps=1, batch=False), store, progress=False)  # would send it twice
    fake.hold.clear()
    run_sweep(spec_for(fake, depths=[0], reps=1), store, progress=False)
    assert fake.calls["create"] == 1  # resumed by polling, not resent
    assert outcomes(store) == Counter({"correct": 1})


def test_cost_cap_and_billing_at_the_batch_price(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--max-cost reserves each case's worst cost at the batch price (half) before it joins
    a batch; what is stored is billed at that price."""
    pytest.importorskip("openai")
    cls, key_var, url_var = FAKES["openai"]
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:m: {input: 1000, output: 1000}\n")  # $0.001 a token on demand
    monkeypatch.setenv(key_var, SECRET)
    with cls() as fake:
        fake.provider = "openai"  # type: ignore[attr-defined]
        monkeypatch.setenv(url_var, fake.url + fake.suffix)
        store = tmp_path / "s.sqlite"
        spec = spec_for(fake, prices=str(prices), max_cost=1.0)
        result = run_sweep(spec, store, progress=False)
    # a case is ~512 prompt + 48 output tokens: $0.56 worst on demand (one fits under $1),
    # $0.28 at the batch price (three fit)
    assert result.sent == 3 and fake.calls["create"] == 1
    db = sqlite3.connect(store)
    rows = db.execute("SELECT cost_usd, reported_prompt_tokens, completion_tokens FROM responses").fetchall()
    db.close()
    assert len(rows) == 3
    assert all(abs(cost - (p + c) * 0.0005) < 1e-9 for cost, p, c in rows)


def test_a_pack_goes_out_as_a_batch_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run --cases PACK --batch``: a pack's exact prompts, through the same session."""
    pytest.importorskip("openai")
    from ctxprobe.cli import main
    from ctxprobe.sweep.packs import run_pack

    first = tmp_path / "a.sqlite"
    result = run_sweep(make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": [512], "depths": [0, 1],
                                  "reps": 1}), first, progress=False)
    pack = tmp_path / "pack.jsonl"
    assert main(["export", result.run_id, "--jsonl", "-o", str(pack), "--store", str(first)]) == 0
    cls, key_var, url_var = FAKES["openai"]
    monkeypatch.setenv(key_var, SECRET)
    with cls() as fake:
        monkeypatch.setenv(url_var, fake.url + fake.suffix)
        store = tmp_path / "b.sqlite"
        r = run_pack(pack, "openai:m", store, batch=True, batch_poll=0.01)
    assert r.sent == 2 and fake.calls["create"] == 1 and fake.calls["upload"] == 1
    assert outcomes(store) == Counter({"correct": 2})
