"""Token-bucket rate limits: requests per minute and tokens per minute.

Providers publish both limits; a sweep that ignores them spends its retries on 429s. A
bucket holds up to one minute's allowance and refills continuously; a request waits until
its cost is available. A cost larger than the whole bucket (one huge prompt under a small
tokens-per-minute limit) is let through when the bucket is full rather than never.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, per_minute: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute <= 0:
            raise ValueError("per_minute must be positive")
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0  # units per second
        self._clock = clock
        self._level = self.capacity
        self._stamp = self._now()
        self._lock = asyncio.Lock()

    def _now(self) -> float:
        return self._clock()

    def _refill(self) -> None:
        now = self._now()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, amount: float = 1.0) -> float:
        """Wait until ``amount`` is available and take it; return the seconds waited."""
        waited = 0.0
        async with self._lock:  # first come, first served
            need = min(amount, self.capacity)
            while True:
                self._refill()
                if self._level >= need:
                    self._level -= amount  # may go negative for an oversized request
                    return waited
                delay = (need - self._level) / self.rate
                await asyncio.sleep(delay)
                waited += delay


class RateLimits:
    """Requests/min and tokens/min together; either may be None (unlimited)."""

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None) -> None:
        self.requests = TokenBucket(requests_per_minute) if requests_per_minute else None
        self.tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None

    async def acquire(self, tokens: int) -> None:
        if self.requests is not None:
            await self.requests.acquire(1)
        if self.tokens is not None:
            await self.tokens.acquire(tokens)
