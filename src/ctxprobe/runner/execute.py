"""Async execution of cases: each sent through a :class:`~ctxprobe.runner.client.ModelClient`
(bounded concurrency, per-attempt timeout, retries with backoff, rate limits).

Cases arrive from a (lazy, possibly slow) iterator that is advanced in a worker thread, so
building the next case overlaps with waiting for the model; a small queue keeps only a few
cases in memory however large the grid. Each result goes to ``sink`` as soon as it arrives
(the caller stores it), so a killed run loses nothing that was answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from ctxprobe.models.base import GenerateRequest, GenerateResult, Provider
from ctxprobe.runner.client import CallPolicy, ModelClient, as_client, backoff_delay, call_with_retries
from ctxprobe.core.case import Case
from ctxprobe.core.variant import VariantDecoding, sample_nonce
from ctxprobe.plan.grid import prefix_chain

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
    #: Prefix-aware scheduling: the server's parallel prefix-cache slots (None: off).
    lanes: int | None = None
    #: Family label → its prompt variant's decoding, over the sweep's (ctxprobe.core.variant).
    variants: Mapping[str, VariantDecoding] = field(default_factory=dict)

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
    prompt-cache hint (the live runner and the batch executor send exactly this). A prompt
    variant's decoding replaces the sweep's for its label's cases, and each of its samples
    carries its own nonce as the seed (:func:`ctxprobe.core.variant.sample_nonce`)."""
    temperature, top_p = cfg.temperature, cfg.top_p
    variant = cfg.variants.get(case.cell.family)
    if variant is not None:
        temperature, top_p = variant.over(temperature, top_p)
    seed = cfg.seed if case.sample is None else sample_nonce(cfg.seed, case.sample)
    return GenerateRequest(messages=case.messages, max_tokens=case.max_tokens or cfg.max_tokens,
                           temperature=temperature, seed=seed, top_p=top_p, prompt_ids=case.prompt_ids,
                           reasoning_budget=case.cell.reasoning_budget, cache=case.cache_hint)


async def execute(cases: Iterator[Case], provider: Provider | ModelClient, sink: Sink, cfg: RunnerConfig,
                  admit: Callable[[Case], bool] | None = None, keep: Callable[[Case], bool] | None = None) -> int:
    """Send every case; return how many were sent.

    ``provider`` is called through a :class:`~ctxprobe.runner.client.ModelClient` (the one
    given, or one built from ``cfg``'s retries, timeout, limits and concurrency).

    With ``cfg.lanes`` (the server's prefix-cache slots), consecutive cases of one prefix
    chain (:func:`ctxprobe.plan.grid.prefix_chain`) are sent in order, one at a time, on
    one lane, and lane ``i`` asks for server slot ``i``: each case finds the one before it
    in its slot's cache. ``min(lanes, concurrency)`` chains are in flight. Without lanes,
    cases go to whichever of ``concurrency`` workers is free.

    ``keep`` is asked first, just before a case would be sent: False skips that case
    alone (another process has taken it over). ``admit`` is asked next (e.g. a spending
    cap); the first refusal stops the sweep: nothing more is sent, and what was received
    is already stored."""
    client = as_client(provider, cfg.policy())
    sent = 0
    stopped = False

    async def send(case: Case, slot: int | None) -> None:
        nonlocal sent, stopped
        if not stopped and keep is not None and not keep(case):
            return  # no longer this process's case: never sent, never stored
        if stopped or (admit is not None and not admit(case)):
            stopped = True
            return  # drain without sending
        max_tokens = case.max_tokens or cfg.max_tokens
        request = replace(request_for(case, cfg), slot=slot)
        done = await client.call(request, case.token_count + max_tokens + (case.cell.reasoning_budget or 0))
        sent += 1
        outcome = sink(Attempted(case, done.result, done.error, done.attempts, done.latency_s))
        if asyncio.iscoroutine(outcome):
            await outcome

    def stopping() -> bool:
        return stopped

    if cfg.lanes:
        await _by_chains(cases, min(cfg.lanes, client.width), send, stopping)
    else:
        await _by_case(cases, client.width, send, stopping)
    return sent


async def _next(cases: Iterator[Case]) -> Case | None:
    """The next case, built in a worker thread (None: the stream is done)."""
    return await asyncio.to_thread(next, cases, None)


async def _by_case(cases: Iterator[Case], workers: int, send: Callable[[Case, int | None], Awaitable[None]],
                   stopped: Callable[[], bool]) -> None:
    queue: asyncio.Queue[Case | None] = asyncio.Queue(maxsize=workers * 2)

    async def produce() -> None:
        try:
            while not stopped() and (case := await _next(cases)) is not None:
                await queue.put(case)
        finally:
            for _ in range(workers):
                await queue.put(None)

    async def work() -> None:
        while (case := await queue.get()) is not None:
            await send(case, None)

    producer = asyncio.create_task(produce())
    try:
        await asyncio.gather(producer, *(work() for _ in range(workers)))
    finally:
        producer.cancel()


async def _by_chains(cases: Iterator[Case], lanes: int, send: Callable[[Case, int | None], Awaitable[None]],
                     stopped: Callable[[], bool]) -> None:
    """Chains of cases, each streamed to one lane as it is built. At most ``lanes``
    chains wait beside the ``lanes`` being sent, so few cases are held however large the grid."""
    chains: asyncio.Queue[asyncio.Queue[Case | None] | None] = asyncio.Queue(maxsize=lanes)

    async def produce() -> None:
        current: asyncio.Queue[Case | None] | None = None
        key: Hashable = None
        try:
            while not stopped() and (case := await _next(cases)) is not None:
                k = prefix_chain(case.cell, case.rep)
                if current is None or k != key:
                    if current is not None:
                        current.put_nowait(None)  # that chain is complete
                    current, key = asyncio.Queue(), k
                    await chains.put(current)  # waits while ``lanes`` chains are already waiting
                current.put_nowait(case)
        finally:
            if current is not None:
                current.put_nowait(None)
            for _ in range(lanes):
                await chains.put(None)

    async def lane(slot: int) -> None:
        while (chain := await chains.get()) is not None:
            while (case := await chain.get()) is not None:
                await send(case, slot)

    producer = asyncio.create_task(produce())
    try:
        await asyncio.gather(producer, *(lane(i) for i in range(lanes)))
    finally:
        producer.cancel()
