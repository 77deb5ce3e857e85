"""Gemini's explicit context caches (``CachedContent``) for a prefix group's shared text.

A request of a group (with a :class:`~ctxprobe.core.prefix.CacheHint`) is cut at its
largest mark the model caches: the part before it goes into a ``CachedContent`` (created
the first time any request of the group needs that mark, with a TTL; the system message
becomes its ``system_instruction``), the rest is sent as the request's ``contents`` with
``cached_content`` set. Text cut inside a message is sent as two consecutive parts of the
same role, the cached one first. A cache about to expire while its group still needs it
gets its TTL extended; one that is gone (expired, deleted elsewhere) is created again; one
the API refuses to create (shorter than the model's minimum by its own count) is not
asked for again, and its requests are sent whole.
Every cache of a group is deleted once all its requests have been answered, and any left
when the provider closes.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from ctxprobe.core.prefix import CacheHint, PrefixMark
from ctxprobe.models.caching import usable_marks
from ctxprobe.plan.caching import CacheRules
from ctxprobe.tokenizers.base import Message

#: A cache with less than this left (seconds) gets its TTL extended before it is used.
REFRESH_MARGIN_S = 60.0


@dataclass
class _Entry:
    name: str
    expires: float  # time.monotonic() when the provider drops it
    tokens: int


def cut_messages(messages: list[Message], mark: PrefixMark) -> tuple[list[Message], list[Message]] | None:
    """(the messages before ``mark``, the rest), or None if the cut leaves nothing to send."""
    i, offset = mark.message, mark.offset
    if i >= len(messages):
        return None
    head, tail = messages[:i], messages[i + 1:]
    text = messages[i]["content"]
    cached = [*head, {**messages[i], "content": text[:offset]}] if offset > 0 else head
    rest = ([{**messages[i], "content": text[offset:]}] if offset < len(text) else []) + tail
    if not rest or not cached or any(m["role"] == "system" for m in rest):
        return None
    return cached, rest


class ExplicitCaches:
    """The explicit caches one provider has created, by (group key, mark)."""

    def __init__(self, model: str, types: Any, rules: CacheRules) -> None:
        self.model = model
        self._types = types
        self.rules = rules
        self._entries: dict[tuple[str, int, int], _Entry] = {}
        self._locks: dict[tuple[str, int, int], asyncio.Lock] = {}
        self._refused: set[tuple[str, int, int]] = set()  # caches the API would not create

    def refuse(self, hint: CacheHint, mark: PrefixMark) -> None:
        """The API refused to create this cache (too small by its count): its requests
        are sent whole, and it is not asked again."""
        self._refused.add((hint.key, mark.message, mark.offset))

    def refused(self, hint: CacheHint, mark: PrefixMark) -> bool:
        return (hint.key, mark.message, mark.offset) in self._refused

    def mark_for(self, hint: CacheHint | None) -> PrefixMark | None:
        marks = usable_marks(hint, self.rules)
        return marks[-1] if marks else None

    async def name_for(self, client: Any, hint: CacheHint, mark: PrefixMark, system: str | None,
                       contents: list[dict[str, Any]]) -> tuple[str, int]:
        """(cache name, tokens it wrote: 0 when it already existed) for ``hint``'s ``mark``."""
        ident = (hint.key, mark.message, mark.offset)
        lock = self._locks.setdefault(ident, asyncio.Lock())
        async with lock:  # one creation per cache, however many requests need it at once
            entry = self._entries.get(ident)
            now = time.monotonic()
            if entry is not None and entry.expires - now < REFRESH_MARGIN_S:
                try:
                    await client.aio.caches.update(name=entry.name, config=self._types.UpdateCachedContentConfig(
                        ttl=f"{int(self.rules.ttl_s)}s"))
                    entry.expires = now + self.rules.ttl_s
                except Exception:  # gone already: make it again
                    self._entries.pop(ident, None)
                    entry = None
            if entry is not None:
                return entry.name, 0
            config = self._types.CreateCachedContentConfig(
                contents=contents or None, system_instruction=system, ttl=f"{int(self.rules.ttl_s)}s",
                display_name=hint.key[:120])
            made = await client.aio.caches.create(model=self.model, config=config)
            usage = getattr(made, "usage_metadata", None)
            tokens = int(getattr(usage, "total_token_count", 0) or 0) or mark.tokens
            self._entries[ident] = _Entry(str(made.name), now + self.rules.ttl_s, tokens)
            return str(made.name), tokens

    def forget(self, hint: CacheHint) -> None:
        """Drop what we know of ``hint``'s caches (one was found gone: they are made again)."""
        for ident in [k for k in self._entries if k[0] == hint.key]:
            self._entries.pop(ident, None)

    async def delete_group(self, client: Any, key: str | None = None) -> int:
        """Delete the caches of group ``key`` (every group's when None); how many."""
        gone = 0
        for ident in [k for k in self._entries if key is None or k[0] == key]:
            entry = self._entries.pop(ident)
            self._locks.pop(ident, None)
            try:
                await client.aio.caches.delete(name=entry.name)
                gone += 1
            except Exception:  # expired already, or the connection is gone: it lapses with its TTL
                pass
        return gone

    @property
    def live(self) -> int:
        return len(self._entries)
