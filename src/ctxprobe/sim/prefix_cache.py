"""A sim server that accounts for prefix caching the way llama.cpp's slot reuse does.

Why: whether a sweep's order lets a server's prefix cache hit is a property of the token
ids sent, consecutively, to one cache slot. This server tokenizes each chat request with
its tokenizer (the same templated ids a llama.cpp server would evaluate), finds the longest
common prefix with what each slot last held, reuses the best slot, and records how many
prompt tokens were cached and how many it had to compute. Answers still come from the
wrapped sim, so a sweep through it is scored normally.

``slots=1`` (default) is llama-cpp-python's server (one ``Llama`` whose KV keeps the
previous prompt). ``slots=N`` is llama.cpp's native server: a slot is held while it
answers; a request that names one (``id_slot``) waits for it, any other takes the idle
slot with the longest common prefix (``--slot-prompt-similarity``), else the least
recently used idle one. ``/props`` reports ``total_slots`` and ``/slots`` lists them, as
llama.cpp does. ``compute_s_per_token`` makes a slot busy for as long as its computed
tokens would take, so concurrent requests meet busy slots as on a real server. Reuse never
covers a whole prompt: at least one token is evaluated, as in llama.cpp (it replays one
token to refresh logits).

:func:`prefix_tree_reuse` is the reference: the most prompt tokens any prefix cache can
reuse for a set of prompts (the prompt tokens less the nodes of their prefix tree).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.models.base import Provider
from ctxprobe.sim.server import SimServer
from ctxprobe.sim.wire import Reply
from ctxprobe.tokenizers.base import Message, Tokenizer


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two id sequences."""
    n = min(len(a), len(b))
    # compare in blocks first: long prompts share hundreds of thousands of tokens
    i, step = 0, 4096
    while i < n:
        j = min(n, i + step)
        if a[i:j] == b[i:j]:
            i = j
            continue
        while i < j and a[i] == b[i]:
            i += 1
        return i
    return n


def prefix_tree_reuse(prompts: Sequence[Sequence[int]]) -> int:
    """The most prompt tokens a prefix cache can serve for ``prompts``, in any order: all
    their tokens less the nodes of their prefix tree (each prompt reuses its longest prefix
    shared with any other sent before it; sorted, that is its neighbour). As in llama.cpp,
    at least one token of every prompt is computed."""
    ordered = sorted(tuple(p) for p in prompts)
    return sum(min(common_prefix(a, b), max(len(b) - 1, 0)) for a, b in zip(ordered, ordered[1:]))


@dataclass(frozen=True)
class CacheRecord:
    """One request's accounting."""

    prompt_tokens: int
    cached_tokens: int
    slot: int
    ids: tuple[int, ...] = field(default=(), repr=False, compare=False)  # the prompt's token ids

    @property
    def computed_tokens(self) -> int:
        return self.prompt_tokens - self.cached_tokens


class PrefixCacheAccount:
    """The slot bookkeeping, independent of HTTP (usable by any server or in a test)."""

    def __init__(self, slots: int = 1) -> None:
        if slots < 1:
            raise ValueError("slots must be >= 1")
        self._slots: list[list[int]] = [[] for _ in range(slots)]
        self._lru: list[int] = list(range(slots))  # least recently used first
        self.records: list[CacheRecord] = []
        self.busy: set[int] = set()
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return len(self._slots)

    def free(self, slot: int | None) -> bool:
        """Whether a request naming ``slot`` (None: any) can start now."""
        return slot not in self.busy if slot is not None else len(self.busy) < len(self._slots)

    def take(self, ids: list[int], slot: int | None = None, *, hold: bool = True) -> CacheRecord:
        """Account ``ids`` on ``slot`` (None: the idle slot sharing the longest prefix, else
        the least recently used idle one) and, with ``hold``, mark it busy until :meth:`release`."""
        with self._lock:
            idle = [s for s in self._lru if s not in self.busy]
            if slot is not None:
                best, best_len = slot, common_prefix(self._slots[slot], ids)
            else:
                best, best_len = idle[0], -1
                for s in idle:
                    n = common_prefix(self._slots[s], ids)
                    if n > best_len:
                        best, best_len = s, n
                if best_len <= 0:
                    best = idle[0]  # nothing shared: take the least recently used slot
            cached = min(max(best_len, 0), max(len(ids) - 1, 0))
            self._slots[best] = list(ids)
            self._lru.remove(best)
            self._lru.append(best)
            if hold:
                self.busy.add(best)
            record = CacheRecord(len(ids), cached, best, tuple(ids))
            self.records.append(record)
            return record

    def release(self, slot: int) -> None:
        with self._lock:
            self.busy.discard(slot)

    def observe(self, ids: list[int]) -> CacheRecord:
        """Account one prompt at once (no slot held)."""
        return self.take(ids, hold=False)

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.records)

    @property
    def computed_tokens(self) -> int:
        return sum(r.computed_tokens for r in self.records)


class PrefixCacheSimServer(SimServer):
    """:class:`SimServer` plus prefix-cache accounting of every chat request.

    Each response's ``usage`` gains ``prompt_tokens_details.cached_tokens`` (the field
    OpenAI and vLLM report), so a client can read the hit per request too."""

    def __init__(self, provider: Provider, tokenizer: Tokenizer | None = None, *, slots: int = 1,
                 compute_s_per_token: float = 0.0, **kwargs: Any) -> None:
        super().__init__(provider, tokenizer, **kwargs)
        if self.tokenizer is None:
            raise ValueError("prefix-cache accounting needs a tokenizer")
        self._counting: Tokenizer = self.tokenizer
        self.cache = PrefixCacheAccount(slots)
        self.compute_s_per_token = compute_s_per_token
        self._changed: asyncio.Condition | None = None  # made on the server's loop

    @contextlib.asynccontextmanager
    async def holding(self, messages: list[Message], body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        ids = self._counting.encode_chat(messages)
        wanted = body.get("id_slot")
        slot = wanted if isinstance(wanted, int) and 0 <= wanted < self.cache.size else None  # -1: any
        if self._changed is None:
            self._changed = asyncio.Condition()
        changed = self._changed
        async with changed:
            await changed.wait_for(lambda: self.cache.free(slot))
            record = self.cache.take(ids, slot)
        try:
            if self.compute_s_per_token:
                await asyncio.sleep(record.computed_tokens * self.compute_s_per_token)
            yield {"prompt_tokens_details": {"cached_tokens": record.cached_tokens}}
        finally:
            async with changed:
                self.cache.release(record.slot)
                changed.notify_all()

    def props(self) -> Reply:
        return Reply(200, {"total_slots": self.cache.size})

    def slot_list(self) -> Reply:
        return Reply(200, [{"id": i, "is_processing": i in self.cache.busy} for i in range(self.cache.size)])
