"""The batch executor on its own: chunking to a provider's limits, a batch recorded but
killed before its id was stored, polling on a fake clock, and control calls' retries."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.cases.builder import build_cases
from ctxprobe.core.case import Case
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import PermanentError, TransientError
from ctxprobe.models.batch import batch_api_for
from ctxprobe.models.batch_base import BatchLimits
from ctxprobe.plan.grid import planned_cases
from ctxprobe.runner import Attempted, RunnerConfig
from ctxprobe.runner.batch import execute_batch, request_for
from ctxprobe.core.batch_journal import ABANDONED, COLLECTED, SUBMITTING, BatchEntry
from memory_journal import MemoryJournal
from ctxprobe.runner.client import CallPolicy, ModelClient
from ctxprobe.spec import make_spec
from ctxprobe.tokenizers import resolve_tokenizer

from fake_batch_apis import FAKES, BatchFake, OpenAIBatchFake

SECRET = "sk-SENTINEL-executor-key-0b7d15aa"


@pytest.fixture(params=["openai", "anthropic", "gemini"])
def fake(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[BatchFake]:
    pytest.importorskip({"gemini": "google.genai"}.get(request.param, request.param))
    cls, key_var, url_var = FAKES[request.param]
    monkeypatch.setenv(key_var, SECRET)
    with cls() as server:
        monkeypatch.setenv(url_var, server.url + server.suffix)
        server.provider = request.param  # type: ignore[attr-defined]
        yield server


def six_cases() -> list[Case]:
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": [512], "depths": [0, 0.5, 1],
                      "reps": 2})
    return list(build_cases(spec, iter(planned_cases(spec)), 1, tokenizer="local", ids="drop"))


class Clock:
    """A fake clock: ``sleep`` records the wait and returns at once."""

    def __init__(self, fake: BatchFake | None = None, release_after: int = 0) -> None:
        self.waits: list[float] = []
        self.fake, self.release_after = fake, release_after

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        if self.fake is not None and len(self.waits) >= self.release_after:
            self.fake.hold.clear()  # the provider finishes the batch after this many polls
        await asyncio.sleep(0)


def run(fake: BatchFake, cases: list[Case], journal: MemoryJournal, *, limits: BatchLimits | None = None,
        clock: Clock | None = None) -> tuple[int, list[Attempted]]:
    got: list[Attempted] = []

    async def go() -> int:
        provider = resolve_provider(f"{fake.provider}:m", None)  # type: ignore[arg-type, attr-defined]
        api: Any = batch_api_for(provider)
        if limits is not None:
            api.limits = limits
        try:
            return await execute_batch(iter(cases), provider, got.append, RunnerConfig(retries=2), journal=journal,
                                       poll_s=7.0, sleep=(clock or Clock()).sleep, api=api)
        finally:
            await provider.aclose()

    return asyncio.run(go()), got


def test_chunked_to_the_request_limit(fake: BatchFake) -> None:
    journal = MemoryJournal()
    sent, got = run(fake, six_cases(), journal, limits=BatchLimits(max_requests=4, max_bytes=10**9))
    assert sent == 6 and fake.calls["create"] == 2
    assert sorted(len(e.case_ids) for e in journal.entries.values()) == [2, 4]
    assert sorted(a.result.text != "" for a in got if a.result) == [True] * 6


def test_chunked_to_the_byte_limit(fake: BatchFake) -> None:
    cases = six_cases()
    provider = resolve_provider(f"{fake.provider}:m", None)  # type: ignore[arg-type, attr-defined]
    one = batch_api_for(provider).request_bytes("r0", request_for(cases[0], RunnerConfig()))
    journal = MemoryJournal()
    sent, got = run(fake, cases, journal, limits=BatchLimits(max_requests=100, max_bytes=int(one * 2.5)))
    assert fake.calls["create"] == 3 and all(len(e.case_ids) == 2 for e in journal.entries.values())
    assert len(got) == 6 and all(a.error is None for a in got)


def test_one_request_over_the_limit_is_an_error_not_a_batch(fake: BatchFake) -> None:
    sent, got = run(fake, six_cases()[:1], MemoryJournal(), limits=BatchLimits(max_requests=10, max_bytes=100))
    assert sent == 0 and fake.calls["create"] == 0
    assert got[0].error is not None and "without --batch" in got[0].error


def test_polls_on_the_fake_clock(fake: BatchFake) -> None:
    clock = Clock(fake, release_after=3)
    fake.hold.set()
    _, got = run(fake, six_cases()[:2], MemoryJournal(), clock=clock)
    assert clock.waits == [7.0, 7.0, 7.0]  # the poll interval, never really slept
    assert len(got) == 2 and fake.calls["retrieve"] >= 4


def test_a_batch_recorded_but_not_stored_is_found_or_resent(fake: BatchFake) -> None:
    """Killed between recording a batch and storing its id: OpenAI's and Gemini's are found
    by their tag and polled; Anthropic's cannot be found, so its cases go out again."""
    cases = six_cases()[:2]
    first = MemoryJournal()
    openai = isinstance(fake, OpenAIBatchFake)
    if openai:  # the first run only makes the batch: a killed one never collected it, so its files stay
        fake.refuse_delete = True
    run(fake, cases, first)
    (entry,) = first.entries.values()
    journal = MemoryJournal()
    journal.record(BatchEntry(entry.key, entry.provider, entry.case_ids, state=SUBMITTING))
    if openai:
        fake.refuse_delete = False
    sent, got = run(fake, cases, journal)
    if fake.provider in ("openai", "gemini"):  # type: ignore[attr-defined]
        assert sent == 0 and fake.calls["create"] == 1 and journal.entries[entry.key].state == COLLECTED
        assert journal.entries[entry.key].batch_id == entry.batch_id
        if openai:  # collected by the second run, which then deletes the batch's files
            assert isinstance(fake, OpenAIBatchFake) and sorted(fake.deleted) == sorted(fake.made) and fake.files == {}
    else:
        assert sent == 2 and fake.calls["create"] == 2 and journal.entries[entry.key].state == ABANDONED
    assert len(got) == 2 and all(a.result is not None for a in got)


def test_a_lost_batch_is_resent(fake: BatchFake) -> None:
    cases = six_cases()[:2]
    journal = MemoryJournal()
    journal.record(BatchEntry("gone", fake.provider, tuple(c.case_id for c in cases),  # type: ignore[attr-defined]
                              batch_id={"gemini": "batches/missing"}.get(fake.provider, "batch_missing"),  # type: ignore[attr-defined]
                              state="submitted"))
    sent, got = run(fake, cases, journal)
    assert journal.entries["gone"].state == ABANDONED and sent == 2 and fake.calls["create"] == 1
    assert all(a.result is not None for a in got)


class Flaky:
    """A provider stand-in for control calls: fails ``n`` times, then answers."""

    name, max_concurrency = "flaky", None


def test_control_retries_transient_failures_on_the_fake_clock() -> None:
    clock = Clock()
    client = ModelClient(Flaky(), CallPolicy(retries=2, timeout=5), rng=random.Random(0), sleep=clock.sleep)  # type: ignore[arg-type]
    calls: list[int] = []

    async def op() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise TransientError("HTTP 503", retry_after=2.0)
        return "ok"

    assert asyncio.run(client.control(op)) == "ok" and len(calls) == 3 and clock.waits == [2.0, 2.0]

    async def never() -> str:
        raise TransientError("HTTP 500")

    with pytest.raises(PermanentError, match="gave up after 3 attempts: HTTP 500"):
        asyncio.run(client.control(never))


def test_no_batch_api_is_one_line(tmp_path: Path) -> None:
    from ctxprobe.errors import CtxprobeError

    with pytest.raises(CtxprobeError, match="has no batch API: --batch works with anthropic:, gemini:, openai: models"):
        batch_api_for(resolve_provider("sim:perfect", resolve_tokenizer("local")))


@pytest.mark.parametrize("clash", [{"executor": "ray"}, {"endpoints": ["sim:perfect"]}, {"live_tokens": "1m"}])
def test_batch_refuses_what_it_cannot_do(clash: dict[str, Any]) -> None:
    from ctxprobe.errors import CtxprobeError

    with pytest.raises(CtxprobeError, match="--batch cannot be combined with"):
        make_spec({"model": "openai:m", "batch": True, **clash})
