"""Prompt caching on the wire: what each provider's request asks for, and the order that
makes the cache pay.

The hints come with the request (:class:`~ctxprobe.core.prefix.CacheHint`, measured on the
built prompts by :mod:`ctxprobe.cases.prefixes`); the rules per model are
:func:`ctxprobe.plan.caching.cache_rules`.

- Anthropic: a message's text is split into content blocks at the hint's marks (the
  same points in every request of the group, so their prefixes stay byte-identical) and
  the largest marks the model can cache, at most 4, carry ``cache_control``
  (:func:`ctxprobe.providers.anthropic.caching.anthropic_blocks`).
- OpenAI: ``prompt_cache_key`` is the group's key, so its requests land where the prefix
  is cached (caching itself is automatic).
- Gemini: explicit ``CachedContent`` where the rules say so (:class:`ExplicitCaches` in
  :mod:`ctxprobe.providers.gemini.cache`); 2.5 models cache implicitly.

:class:`PrefixGate` holds back the requests of a group until its first one has answered,
so the cache they read exists when they are sent (the runner sends a group's requests
together, up to the concurrency limit); once it has, the rest go in parallel.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ctxprobe.core.prefix import CacheHint, PrefixMark
from ctxprobe.plan.caching import CacheRules


def usable_marks(hint: CacheHint | None, rules: CacheRules) -> list[PrefixMark]:
    """The hint's marks this model caches (at least its minimum), ascending."""
    if hint is None or rules.mechanism == "none":
        return []
    return [m for m in hint.marks if m.tokens >= rules.min_tokens]


def split_text(text: str, offsets: list[int]) -> list[tuple[str, int]]:
    """``text`` cut at ``offsets``: (piece, the offset it ends at), empty pieces left out."""
    out: list[tuple[str, int]] = []
    start = 0
    for cut in sorted({o for o in offsets if 0 < o < len(text)}) + [len(text)]:
        if cut > start:
            out.append((text[start:cut], cut))
        start = cut
    return out


class PrefixGate:
    """Per cache key: the group's first request goes alone; the others wait until it has
    answered (or failed), then go together. A key not used for ``ttl_s`` starts over (its
    cache may be gone: the next request writes it again)."""

    def __init__(self, ttl_s: float = 300.0) -> None:
        self.ttl_s = ttl_s
        self._ready: dict[str, asyncio.Event] = {}
        self._used: dict[str, float] = {}
        self._done: dict[str, int] = {}

    @asynccontextmanager
    async def enter(self, hint: CacheHint | None) -> AsyncIterator[bool]:
        """Wait for the group's writer if there is one in flight; yields True for the
        request that writes (the first of its key, or the first after the TTL)."""
        if hint is None:
            yield False
            return
        key, now = hint.key, time.monotonic()
        event = self._ready.get(key)
        stale = key in self._used and now - self._used[key] > self.ttl_s
        writer = event is None or stale
        if writer:
            event = self._ready[key] = asyncio.Event()
        else:
            assert event is not None
            await event.wait()
        try:
            yield writer
        finally:
            self._used[key] = time.monotonic()
            if writer:
                event.set()
            self._done[key] = self._done.get(key, 0) + 1

    def finished(self, hint: CacheHint) -> bool:
        """Every member of the hint's group has been answered."""
        return self._done.get(hint.key, 0) >= hint.size
