"""Async execution: bounded concurrency, per-request timeout, retries with backoff.

Cases arrive from a (lazy, possibly slow) iterator that is advanced in a worker thread, so
building the next case overlaps with waiting for the model; a small queue keeps only a few
cases in memory however large the grid. Each result goes to ``sink`` as soon as it arrives
(the caller stores it), so a killed run loses nothing that was answered.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, Provider, TransientError
from ctxprobe.runner.limits import RateLimits
from ctxprobe.core.case import Case


@dataclass(frozen=True)
class RunnerConfig:
    concurrency: int = 4
    timeout: float = 600.0  # seconds per attempt
    retries: int = 4  # extra attempts after the first, for transient failures
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_tokens: int = 48
    temperature: float = 0.0
    seed: int | None = None
    top_p: float | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None


@dataclass
class Attempted:
    case: Case
    result: GenerateResult | None
    error: str | None
    attempts: int
    latency_s: float


Sink = Callable[[Attempted], Awaitable[None] | None]


def backoff_delay(attempt: int, cfg: RunnerConfig, retry_after: float | None, rng: random.Random) -> float:
    """Retry-After wins when the server gives it; else exponential backoff with full jitter."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), cfg.backoff_max)
    cap = min(cfg.backoff_max, cfg.backoff_base * (2**attempt))
    return rng.uniform(cap / 2, cap)


async def call_with_retries(provider: Provider, request: GenerateRequest, cfg: RunnerConfig,
                            rng: random.Random, limits: RateLimits | None = None,
                            cost_tokens: int = 0) -> tuple[GenerateResult | None, str | None, int, float]:
    attempts = 0
    last_error = "not attempted"
    while attempts <= cfg.retries:
        attempts += 1
        if limits is not None:
            await limits.acquire(cost_tokens)  # every attempt spends from the provider's limits
        start = time.perf_counter()
        retry_after: float | None = None
        try:
            result = await asyncio.wait_for(provider.generate(request), timeout=cfg.timeout)
            return result, None, attempts, time.perf_counter() - start
        except asyncio.TimeoutError:
            last_error = f"timed out after {cfg.timeout:g}s"
        except TransientError as err:
            last_error = str(err) or type(err).__name__
            retry_after = err.retry_after
        except PermanentError as err:
            return None, str(err) or type(err).__name__, attempts, time.perf_counter() - start
        if attempts <= cfg.retries:
            await asyncio.sleep(backoff_delay(attempts - 1, cfg, retry_after, rng))
    return None, f"gave up after {attempts} attempts: {last_error}", attempts, 0.0


async def execute(cases: Iterator[Case], provider: Provider, sink: Sink, cfg: RunnerConfig,
                  admit: Callable[[Case], bool] | None = None, keep: Callable[[Case], bool] | None = None) -> int:
    """Send every case; return how many were sent.

    ``keep`` is asked first, just before a case would be sent: False skips that case
    alone (another process has taken it over). ``admit`` is asked next (e.g. a spending
    cap); the first refusal stops the sweep: nothing more is sent, and what was received
    is already stored."""
    workers = cfg.concurrency
    if provider.max_concurrency is not None:
        workers = max(1, min(workers, provider.max_concurrency))
    queue: asyncio.Queue[Case | None] = asyncio.Queue(maxsize=workers * 2)
    sent = 0
    rng = random.Random()
    done_sentinel = object()
    limits = RateLimits(cfg.requests_per_minute, cfg.tokens_per_minute)
    stopped = False

    async def produce() -> None:
        try:
            while not stopped:
                case = await asyncio.to_thread(next, cases, done_sentinel)
                if case is done_sentinel:
                    break
                await queue.put(case)  # type: ignore[arg-type]
        finally:
            for _ in range(workers):
                await queue.put(None)

    async def work() -> None:
        nonlocal sent
        nonlocal stopped
        while (case := await queue.get()) is not None:
            if not stopped and keep is not None and not keep(case):
                continue  # no longer this process's case: never sent, never stored
            if stopped or (admit is not None and not admit(case)):
                stopped = True
                continue  # drain the queue without sending
            max_tokens = case.max_tokens or cfg.max_tokens
            request = GenerateRequest(messages=case.messages, max_tokens=max_tokens,
                                      temperature=cfg.temperature, seed=cfg.seed, top_p=cfg.top_p,
                                      prompt_ids=case.prompt_ids)
            result, error, attempts, latency = await call_with_retries(
                provider, request, cfg, rng, limits, case.token_count + max_tokens)
            sent += 1
            outcome = sink(Attempted(case, result, error, attempts, latency))
            if asyncio.iscoroutine(outcome):
                await outcome

    producer = asyncio.create_task(produce())
    try:
        await asyncio.gather(producer, *(work() for _ in range(workers)))
    finally:
        producer.cancel()
    return sent
