"""Async execution of cases: each sent through a :class:`~ctxprobe.runner.client.ModelClient`
(bounded concurrency, per-attempt timeout, retries with backoff, rate limits).

Cases arrive from a (lazy, possibly slow) iterator that is advanced in a worker thread, so
building the next case overlaps with waiting for the model; a small queue keeps only a few
cases in memory however large the grid. Each result goes to ``sink`` as soon as it arrives
(the caller stores it), so a killed run loses nothing that was answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from ctxprobe.models.base import GenerateRequest, GenerateResult, Provider
from ctxprobe.runner.client import CallPolicy, ModelClient, as_client, backoff_delay, call_with_retries
from ctxprobe.core.case import Case

__all__ = ["Attempted", "RunnerConfig", "Sink", "backoff_delay", "call_with_retries", "execute"]


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

    def policy(self) -> CallPolicy:
        """How the model is called (the rest of the config is what is asked of it)."""
        return CallPolicy(concurrency=self.concurrency, timeout=self.timeout, retries=self.retries,
                          backoff_base=self.backoff_base, backoff_max=self.backoff_max,
                          requests_per_minute=self.requests_per_minute, tokens_per_minute=self.tokens_per_minute)


@dataclass
class Attempted:
    case: Case
    result: GenerateResult | None
    error: str | None
    attempts: int
    latency_s: float


Sink = Callable[[Attempted], Awaitable[None] | None]


def request_for(case: Case, cfg: RunnerConfig) -> GenerateRequest:
    """The request one case is sent as: its prompt, output limit, reasoning budget and
    prompt-cache hint (the live runner and the batch executor send exactly this)."""
    return GenerateRequest(messages=case.messages, max_tokens=case.max_tokens or cfg.max_tokens,
                           temperature=cfg.temperature, seed=cfg.seed, top_p=cfg.top_p, prompt_ids=case.prompt_ids,
                           reasoning_budget=case.cell.reasoning_budget, cache=case.cache_hint)


async def execute(cases: Iterator[Case], provider: Provider | ModelClient, sink: Sink, cfg: RunnerConfig,
                  admit: Callable[[Case], bool] | None = None, keep: Callable[[Case], bool] | None = None) -> int:
    """Send every case; return how many were sent.

    ``provider`` is called through a :class:`~ctxprobe.runner.client.ModelClient` (the one
    given, or one built from ``cfg``'s retries, timeout, limits and concurrency).

    ``keep`` is asked first, just before a case would be sent: False skips that case
    alone (another process has taken it over). ``admit`` is asked next (e.g. a spending
    cap); the first refusal stops the sweep: nothing more is sent, and what was received
    is already stored."""
    client = as_client(provider, cfg.policy())
    workers = client.width
    queue: asyncio.Queue[Case | None] = asyncio.Queue(maxsize=workers * 2)
    sent = 0
    stopped = False

    async def produce() -> None:
        try:
            while not stopped:
                case: Case | None = await asyncio.to_thread(next, cases, None)  # None: the stream is done
                if case is None:
                    break
                await queue.put(case)
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
            request = request_for(case, cfg)
            done = await client.call(request, case.token_count + max_tokens + (case.cell.reasoning_budget or 0))
            sent += 1
            outcome = sink(Attempted(case, done.result, done.error, done.attempts, done.latency_s))
            if asyncio.iscoroutine(outcome):
                await outcome

    producer = asyncio.create_task(produce())
    try:
        await asyncio.gather(producer, *(work() for _ in range(workers)))
    finally:
        producer.cancel()
    return sent
