"""Loopback fakes of the three hosted APIs that simulate their prompt caches for real.

Each route keeps the prompts it has seen and answers the cache fields of the real wire
protocol from them, so a test proves the requests we send produce hits:

- Anthropic (``/v1/messages``): ``cache_control`` breakpoints (at most 4, else a 400 as
  the API gives), entries written at each breakpoint of at least ``min_tokens``, a read
  at the longest block boundary already cached; ``usage.cache_creation_input_tokens``,
  ``cache_read_input_tokens`` and the rest in ``input_tokens``.
- OpenAI (``/v1/chat/completions``): automatic caching of every prompt's prefixes of
  1,024 tokens and more in 128-token steps, seen only by requests with the same
  ``prompt_cache_key`` (requests land on the machine their key routes to);
  ``usage.prompt_tokens_details.cached_tokens``.
- Gemini (``/v1beta``): ``cachedContents`` create / get / patch (TTL) / delete with a
  minimum size, ``generateContent`` with ``cachedContent`` (a 404 when it is gone, a 400
  with a system instruction beside it), implicit caching of earlier prompts' prefixes
  for 2.5 models; ``usageMetadata.cachedContentTokenCount``.

A token here is a word with its trailing whitespace; a message's role is one more token.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from fake_llm_apis import Reply, _model_info

ANSWER = "The code is 4819203."


def words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def _digest(tokens: list[str]) -> str:
    return hashlib.sha256("\x00".join(tokens).encode()).hexdigest()


def _common(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


@dataclass
class AnthropicCache:
    """The prompt cache of one fake Anthropic server."""

    min_tokens: int = 1024
    ttl_s: float = 300.0
    entries: dict[str, float] = field(default_factory=dict)  # prefix digest -> expiry
    breakpoints_seen: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def route(self, method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        if method == "GET" and path.startswith("/v1/models/"):  # models.retrieve, as the plain fake states it
            return 200, _model_info(path.split("?")[0].rsplit("/", 1)[-1]), {}
        tokens: list[str] = []
        bounds: list[tuple[int, bool]] = []  # (tokens before the block's end, has cache_control)
        if body.get("system") is not None:
            for b in _blocks(body["system"]):
                tokens += words(b["text"])
                bounds.append((len(tokens), "cache_control" in b))
        for m in body["messages"]:
            tokens.append(f"<{m['role']}>")
            for b in _blocks(m["content"]):
                if not b.get("text"):
                    return 400, _anthropic_error("text content blocks must be non-empty"), {}
                tokens += words(b["text"])
                bounds.append((len(tokens), "cache_control" in b))
        marked = [pos for pos, cc in bounds if cc]
        if len(marked) > 4:
            return 400, _anthropic_error(f"A maximum of 4 blocks with cache_control may be provided. Found {len(marked)}."), {}
        now = time.monotonic()
        with self.lock:
            self.breakpoints_seen.append(len(marked))
            live = {k for k, t in self.entries.items() if t > now}
            last = max(marked, default=0)
            read = max((pos for pos, _ in bounds if pos <= last and _digest(tokens[:pos]) in live), default=0)
            if read:
                self.entries[_digest(tokens[:read])] = now + self.ttl_s  # refreshed on use
            written = 0
            for pos in marked:
                if pos >= self.min_tokens and pos > read:
                    self.entries[_digest(tokens[:pos])] = now + self.ttl_s
                    written = max(written, pos - read)
        usage = {"input_tokens": len(tokens) - read - written, "cache_creation_input_tokens": written,
                 "cache_read_input_tokens": read, "output_tokens": 7}
        return 200, {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model"),
                     "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn",
                     "stop_sequence": None, "usage": usage}, {}


def _anthropic_error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


@dataclass
class OpenAICache:
    """Automatic prefix caching, partitioned by ``prompt_cache_key``."""

    min_tokens: int = 1024
    step: int = 128
    seen: dict[str, set[str]] = field(default_factory=dict)  # key -> digests of cached prefixes
    keys: list[str | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def route(self, method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        tokens: list[str] = []
        for m in body["messages"]:
            tokens.append(f"<{m['role']}>")
            tokens += words(m["content"] if isinstance(m["content"], str) else "".join(p["text"] for p in m["content"]))
        key = body.get("prompt_cache_key")
        points = list(range(self.min_tokens, len(tokens) + 1, self.step))
        with self.lock:
            self.keys.append(key)
            part = self.seen.setdefault(key or "", set())
            cached = max((p for p in points if _digest(tokens[:p]) in part), default=0)
            part.update(_digest(tokens[:p]) for p in points)
        usage = {"prompt_tokens": len(tokens), "completion_tokens": 7, "total_tokens": len(tokens) + 7,
                 "prompt_tokens_details": {"cached_tokens": cached}}
        return 200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER},
                                  "finish_reason": "stop"}], "usage": usage}, {}


@dataclass
class GeminiCache:
    """Explicit ``cachedContents`` and, for 2.5 models, implicit caching."""

    min_tokens: int = 1024
    caches: dict[str, tuple[list[str], float, str]] = field(default_factory=dict)  # name -> (tokens, expiry, model)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    prompts: list[list[str]] = field(default_factory=list)
    expire_after_use: bool = False  # a cache lapses right after its first use (its TTL ran out)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @staticmethod
    def _tokens(system: Any, contents: list[dict[str, Any]]) -> list[str]:
        out: list[str] = []
        for part in (system or {}).get("parts", []):
            out += words(part.get("text", ""))
        for c in contents:
            out.append(f"<{c.get('role', 'user')}>")
            for part in c.get("parts", []):
                out += words(part.get("text", ""))
        return out

    def _meta(self, name: str) -> dict[str, Any]:
        tokens, expires, model = self.caches[name]
        left = max(0.0, expires - time.monotonic())
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + left))
        return {"name": name, "model": model, "createTime": "2025-01-01T00:00:00Z", "updateTime": stamp,
                "expireTime": stamp, "usageMetadata": {"totalTokenCount": len(tokens)}}

    def route(self, method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        now = time.monotonic()
        path = path.split("?", 1)[0]
        with self.lock:
            if path.endswith("/cachedContents") and method == "POST":
                tokens = self._tokens(body.get("systemInstruction"), body.get("contents") or [])
                if len(tokens) < self.min_tokens:
                    return 400, _google_error(400, f"Cached content is too small. total_token_count={len(tokens)}, "
                                                   f"min_total_token_count={self.min_tokens}", "INVALID_ARGUMENT"), {}
                name = f"cachedContents/c{len(self.created)}"
                ttl = float(str(body.get("ttl", "3600s")).rstrip("s"))
                self.caches[name] = (tokens, now + ttl, str(body.get("model")))
                self.created.append(name)
                return 200, self._meta(name), {}
            match = re.search(r"/(cachedContents/[^/:]+)$", path)
            if match:
                name = match.group(1)
                if name not in self.caches or self.caches[name][1] <= now:
                    return 404, _google_error(404, "CachedContent not found", "NOT_FOUND"), {}
                if method == "DELETE":
                    del self.caches[name]
                    self.deleted.append(name)
                    return 200, {}, {}
                if method == "PATCH":
                    tokens, _, model = self.caches[name]
                    self.caches[name] = (tokens, now + float(str(body["ttl"]).rstrip("s")), model)
                return 200, self._meta(name), {}
            model = re.search(r"/models/([^/:]+):generateContent", path)
            if not model:
                return 404, _google_error(404, f"no route {path}", "NOT_FOUND"), {}
            tokens = self._tokens(body.get("systemInstruction"), body.get("contents") or [])
            name = body.get("cachedContent")
            cached = 0
            if name:
                if body.get("systemInstruction"):
                    return 400, _google_error(400, "CachedContent can not be used with GenerateContent request "
                                                   "setting system_instruction", "INVALID_ARGUMENT"), {}
                if name not in self.caches or self.caches[name][1] <= now:
                    return 404, _google_error(404, "CachedContent not found (or permission denied)", "NOT_FOUND"), {}
                prefix = self.caches[name][0]
                tokens, cached = prefix + tokens, len(prefix)
                if self.expire_after_use:
                    del self.caches[name]
            elif "2.5" in model.group(1):  # implicit caching
                best = max((_common(tokens, p) for p in self.prompts), default=0)
                cached = best if best >= self.min_tokens else 0
            self.prompts.append(tokens)
        usage: dict[str, Any] = {"promptTokenCount": len(tokens), "candidatesTokenCount": 7,
                                 "totalTokenCount": len(tokens) + 7}
        if cached:
            usage["cachedContentTokenCount"] = cached
        return 200, {"candidates": [{"content": {"role": "model", "parts": [{"text": ANSWER}]}, "finishReason": "STOP",
                                     "index": 0}], "usageMetadata": usage, "modelVersion": model.group(1)}, {}


def _google_error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}
