"""A sim server that accounts for prefix caching the way llama.cpp's slot reuse does.

Why: whether a sweep's order lets a server's prefix cache hit is a property of the token
ids sent, consecutively, to one cache slot. This server tokenizes each chat request with
its tokenizer (the same templated ids a llama.cpp server would evaluate), finds the longest
common prefix with what each slot last held, reuses the best slot, and records how many
prompt tokens were cached and how many it had to compute. Answers still come from the
wrapped sim, so a sweep through it is scored normally.

``slots=1`` (default) is llama-cpp-python's server (one ``Llama`` whose KV keeps the
previous prompt). ``slots=N`` picks the slot with the longest common prefix, as llama.cpp's
native server does with ``--slot-prompt-similarity``. Reuse never covers a whole prompt:
at least one token is evaluated, as in llama.cpp (it replays one token to refresh logits).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxprobe.models.base import Provider
from ctxprobe.models.sim_server import SimServer
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


@dataclass(frozen=True)
class CacheRecord:
    """One request's accounting."""

    prompt_tokens: int
    cached_tokens: int
    slot: int

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
        self._lock = threading.Lock()

    def observe(self, ids: list[int]) -> CacheRecord:
        with self._lock:
            best, best_len = self._lru[0], -1
            for s in self._lru:
                n = common_prefix(self._slots[s], ids)
                if n > best_len:
                    best, best_len = s, n
            if best_len <= 0:
                best = self._lru[0]  # nothing shared: take the least recently used slot
            cached = min(max(best_len, 0), max(len(ids) - 1, 0))
            self._slots[best] = list(ids)
            self._lru.remove(best)
            self._lru.append(best)
            record = CacheRecord(len(ids), cached, best)
            self.records.append(record)
            return record

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
                 **kwargs: Any) -> None:
        super().__init__(provider, tokenizer, **kwargs)
        if self.tokenizer is None:
            raise ValueError("prefix-cache accounting needs a tokenizer")
        self._counting: Tokenizer = self.tokenizer
        self.cache = PrefixCacheAccount(slots)

    def observe_prompt(self, messages: list[Message]) -> dict[str, Any]:
        record = self.cache.observe(self._counting.encode_chat(messages))
        return {"prompt_tokens_details": {"cached_tokens": record.cached_tokens}}
