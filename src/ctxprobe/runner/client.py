"""The one way ctxprobe calls a model: retries, timeouts, rate limits and concurrency.

Every caller — the sweep's runner, preflight's probe, the judge grading an answer and the
judge's calibration — sends through a :class:`ModelClient`, so a 429, a hang or a dropped
connection is treated the same whoever meets it: retried with backoff (``Retry-After``
when the server gives one), each attempt bounded by the timeout and paid for from the
requests/tokens-per-minute buckets, at most ``concurrency`` requests in flight. A call
that still fails comes back as a :class:`CallOutcome` with an error, never as an
exception, so the caller decides what it means (the sweep stores a harness ``error``).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, Provider, TransientError
from ctxprobe.runner.limits import RateLimits

T = TypeVar("T")


@dataclass(frozen=True)
class CallPolicy:
    """How calls to one model are sent (transport only: never part of a run's identity)."""

    concurrency: int = 4
    timeout: float = 600.0  # seconds per attempt
    retries: int = 4  # extra attempts after the first, for transient failures
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None


@dataclass(frozen=True)
class CallOutcome:
    """A call's end: the result, or the error it gave up with (after ``attempts``)."""

    result: GenerateResult | None
    error: str | None
    attempts: int
    latency_s: float


class Retrying(Protocol):
    """What retrying reads of a policy (a :class:`CallPolicy`, or the runner's config)."""

    @property
    def timeout(self) -> float: ...
    @property
    def retries(self) -> int: ...
    @property
    def backoff_base(self) -> float: ...
    @property
    def backoff_max(self) -> float: ...


def backoff_delay(attempt: int, policy: Retrying, retry_after: float | None, rng: random.Random) -> float:
    """Retry-After wins when the server gives it; else exponential backoff with full jitter."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), policy.backoff_max)
    cap = min(policy.backoff_max, policy.backoff_base * (2**attempt))
    return rng.uniform(cap / 2, cap)


async def bounded(aw: Awaitable[T], timeout: float | None) -> T:
    """``await aw``, cancelled and :class:`asyncio.TimeoutError` after ``timeout`` seconds.

    Not ``asyncio.wait_for``: on Python 3.10/3.11 it drops a cancellation (Ctrl-C) that
    lands just as the call ends, so an interrupted run would carry on."""
    call = asyncio.ensure_future(aw)
    try:
        done, _ = await asyncio.wait({call}, timeout=timeout)
    except asyncio.CancelledError:
        call.cancel()
        raise
    if not done:
        call.cancel()
        await asyncio.wait({call})  # let it unwind (close its connection) before the retry
        raise asyncio.TimeoutError
    return call.result()


async def call_with_retries(provider: Provider, request: GenerateRequest, policy: Retrying,
                            rng: random.Random, limits: RateLimits | None = None, cost_tokens: int = 0,
                            sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                            ) -> tuple[GenerateResult | None, str | None, int, float]:
    """(result or None, error or None, attempts, latency of the answering attempt)."""
    attempts = 0
    last_error = "not attempted"
    while attempts <= policy.retries:
        attempts += 1
        if limits is not None:
            await limits.acquire(cost_tokens)  # every attempt spends from the provider's limits
        start = time.perf_counter()
        retry_after: float | None = None
        try:
            result = await bounded(provider.generate(request), policy.timeout)
            return result, None, attempts, time.perf_counter() - start
        except asyncio.TimeoutError:
            last_error = f"timed out after {policy.timeout:g}s"
        except TransientError as err:
            last_error = str(err) or type(err).__name__
            retry_after = err.retry_after
        except PermanentError as err:
            return None, str(err) or type(err).__name__, attempts, time.perf_counter() - start
        if attempts <= policy.retries:
            await sleep(backoff_delay(attempts - 1, policy, retry_after, rng))
    return None, f"gave up after {attempts} attempts: {last_error}", attempts, 0.0


class ModelClient:
    """A provider behind one :class:`CallPolicy`: what every caller sends through.

    ``width`` (the policy's concurrency, capped by what the provider can take) bounds the
    calls in flight across all callers sharing this client; the rate limits are shared
    likewise. The provider itself stays the caller's to close."""

    def __init__(self, provider: Provider, policy: CallPolicy | None = None, *,
                 rng: random.Random | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.provider = provider
        self.policy = policy or CallPolicy()
        self.limits = RateLimits(self.policy.requests_per_minute, self.policy.tokens_per_minute)
        self.rng = rng or random.Random()
        self._sleep = sleep  # the backoff's wait (tests pass a fake clock's)
        self.width = max(1, min(self.policy.concurrency, provider.max_concurrency or self.policy.concurrency))
        self._slots = asyncio.Semaphore(self.width)

    @property
    def name(self) -> str:
        return self.provider.name

    async def call(self, request: GenerateRequest, cost_tokens: int | None = None) -> CallOutcome:
        """Send ``request`` under the policy; ``cost_tokens`` is what the tokens-per-minute
        bucket is charged per attempt (default: the request's output budget)."""
        cost = cost_tokens if cost_tokens is not None else request.max_tokens
        async with self._slots:
            result, error, attempts, latency = await call_with_retries(
                self.provider, request, self.policy, self.rng, self.limits, cost, self._sleep)
        return CallOutcome(result, error, attempts, latency)

    async def control(self, op: Callable[[], Awaitable[T]]) -> T:
        """A call that is not a generation (a batch's create, poll, results, cancel) under
        the same policy: each attempt bounded by the timeout, transient failures retried
        with backoff; raises :class:`PermanentError` once it gives up."""
        attempts = 0
        while True:
            attempts += 1
            try:
                return await bounded(op(), self.policy.timeout)
            except asyncio.TimeoutError:
                err = TransientError(f"timed out after {self.policy.timeout:g}s")
            except TransientError as exc:
                err = exc
            if attempts > self.policy.retries:
                raise PermanentError(f"gave up after {attempts} attempts: {err}")
            await self._sleep(backoff_delay(attempts - 1, self.policy, err.retry_after, self.rng))


def as_client(model: Provider | ModelClient, policy: CallPolicy | None = None) -> ModelClient:
    """``model`` itself when it is a client already, else the provider behind ``policy``."""
    return model if isinstance(model, ModelClient) else ModelClient(model, policy)
