"""The one model client: retries (Retry-After first), permanent errors, timeouts and the
bound on calls in flight, for every caller. Fake sleeps and events, no clock."""

from __future__ import annotations

import asyncio

from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, TransientError
from ctxprobe.runner.client import CallPolicy, ModelClient, as_client

REQUEST = GenerateRequest([{"role": "user", "content": "hi"}], max_tokens=4)


class Scripted:
    """Fails with the given errors in turn, then answers."""

    name = "scripted"
    max_concurrency: int | None = None
    context_window = None

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return GenerateResult("ok", "stop", 3, 1)

    async def aclose(self) -> None:
        return None


def _client(provider, **policy) -> tuple[ModelClient, list[float]]:
    waited: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waited.append(seconds)

    return ModelClient(provider, CallPolicy(**policy), sleep=fake_sleep), waited


def test_transient_errors_are_retried_with_retry_after_first() -> None:
    provider = Scripted(TransientError("429", retry_after=7.0), TransientError("drop"))
    client, waited = _client(provider, retries=2, backoff_base=1.0)
    done = asyncio.run(client.call(REQUEST))
    assert done.result is not None and done.result.text == "ok" and done.error is None and done.attempts == 3
    assert waited[0] == 7.0 and 1.0 <= waited[1] <= 2.0  # Retry-After, then jittered backoff of attempt 2


def test_retries_run_out_into_an_error_not_an_exception() -> None:
    provider = Scripted(*(TransientError("HTTP 429") for _ in range(5)))
    client, waited = _client(provider, retries=1)
    done = asyncio.run(client.call(REQUEST))
    assert done.result is None and done.attempts == 2 == provider.calls and len(waited) == 1
    assert done.error == "gave up after 2 attempts: HTTP 429"


def test_a_permanent_error_is_not_retried() -> None:
    provider = Scripted(PermanentError("HTTP 400"))
    client, waited = _client(provider, retries=4)
    done = asyncio.run(client.call(REQUEST))
    assert done.result is None and done.error == "HTTP 400" and done.attempts == 1 and waited == []


class Never:
    name = "never"
    max_concurrency = None
    context_window = None

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        await asyncio.Event().wait()  # never set: only the client's timeout ends this
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        return None


def test_a_hang_ends_at_the_timeout_and_is_retried() -> None:
    client, waited = _client(Never(), retries=1, timeout=0.01)
    done = asyncio.run(client.call(REQUEST))
    assert done.result is None and done.attempts == 2 and "timed out after 0.01s" in str(done.error)


class Gated:
    """Calls wait on a gate the test opens; counts how many are inside at once."""

    name = "gated"
    context_window = None

    def __init__(self, max_concurrency: int | None = None) -> None:
        self.max_concurrency = max_concurrency
        self.inside = 0
        self.peak = 0
        self.gate: asyncio.Event | None = None

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        assert self.gate is not None
        self.inside += 1
        self.peak = max(self.peak, self.inside)
        await self.gate.wait()
        self.inside -= 1
        return GenerateResult("ok")

    async def aclose(self) -> None:
        return None


def _peak(provider: Gated, concurrency: int, calls: int) -> tuple[int, int]:
    async def go() -> tuple[int, int]:
        provider.gate = asyncio.Event()
        client = ModelClient(provider, CallPolicy(concurrency=concurrency))
        tasks = [asyncio.create_task(client.call(REQUEST)) for _ in range(calls)]
        for _ in range(20):  # let every task run as far as it can (no I/O: deterministic)
            await asyncio.sleep(0)
        inside = provider.inside
        provider.gate.set()
        done = await asyncio.gather(*tasks)
        assert all(d.result is not None for d in done)
        return inside, provider.peak

    return asyncio.run(go())


def test_calls_in_flight_are_bounded_by_the_policy_and_the_provider() -> None:
    assert _peak(Gated(), concurrency=3, calls=10) == (3, 3)
    assert _peak(Gated(max_concurrency=2), concurrency=8, calls=10) == (2, 2)  # the provider's cap wins
    assert _peak(Gated(), concurrency=16, calls=5) == (5, 5)


def test_as_client_keeps_a_client_and_wraps_a_provider() -> None:
    client = ModelClient(Scripted())
    assert as_client(client) is client
    wrapped = as_client(Scripted(), CallPolicy(retries=0))
    assert isinstance(wrapped, ModelClient) and wrapped.policy.retries == 0
