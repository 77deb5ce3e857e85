"""The shared part of a provider's token-counting API (``anthropic-count:MODEL``,
``gemini-count:MODEL``: each provider's own subclass is in its folder,
``ctxprobe/providers/<name>/count.py``).

Anthropic (``messages.count_tokens``) and Gemini (``models.count_tokens``) publish no
tokenizer, but count a prompt exactly on request. One API call per filler sentence would
be absurd, so the work is split:

- whole chat prompts (``count_chat``/``encode_chat``: the case builder's fixed part and its
  final verification of every case) are counted by the API — exact, cached;
- text pieces (``count``/``count_many``: filler sentences, needles) use an
  :class:`~ctxprobe.tokenizers.approx.ApproxTokenizer` that every API count recalibrates.

The case builder packs with the estimates and then verifies with the exact count, moving
sentences until the exact count fits the budget, so each case's recorded length is the
API's own number. Token ids are unknown (:data:`UNKNOWN_ID` placeholders, exact length).

The sync SDK clients are used (the builder runs in a worker thread), with SDK retries off
except for a couple on 429/5xx, since a failed count fails the case build. Keys as for the
providers (``ANTHROPIC_API_KEY``; ``GEMINI_API_KEY``/``GOOGLE_API_KEY``), never shown.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers.approx import ApproxTokenizer
from ctxprobe.tokenizers.base import Message, TokenizerBase, fold_prefill

UNKNOWN_ID = -1
_CACHE_MAX = 256
#: Every count tokenizer's SDK client: a couple of retries on 429/5xx (a failed count fails the
#: case build), and two minutes a request (a 1M-token prompt is counted whole).
COUNT_RETRIES = 2
COUNT_TIMEOUT_S = 120.0


def api_key_from(env: tuple[str, ...], who: str) -> str:
    for var in env:
        if os.environ.get(var, "").strip():
            return os.environ[var].strip()
    raise CtxprobeError(f"{who} needs an API key: set {' or '.join(env)} in the environment")


class APICountTokenizer(TokenizerBase):
    """Exact chat counts from an API, approximate text counts calibrated by them."""

    is_approximate = False  # every case's final count is the API's own

    def __init__(self, name: str, model: str) -> None:
        self.name = name
        self.model = model
        self.text = ApproxTokenizer(name=f"{name} (text estimate)")
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self._secret: str | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def _client_kwargs(self, key_env: tuple[str, ...], url_env: str, base_url: str | None) -> dict[str, Any]:
        """The SDK client's settings, as openai's and anthropic's clients name them: the key
        (the first of ``key_env`` set; kept to scrub from errors, never shown), the base URL
        (``base_url``, else ``url_env``'s, else the SDK's own), :data:`COUNT_RETRIES` and
        :data:`COUNT_TIMEOUT_S`."""
        self._secret = api_key_from(key_env, self.name)
        kwargs: dict[str, Any] = {"api_key": self._secret, "max_retries": COUNT_RETRIES, "timeout": COUNT_TIMEOUT_S}
        url = base_url or os.environ.get(url_env, "").strip() or None
        if url:
            kwargs["base_url"] = url
        return kwargs

    def _api_count(self, messages: list[Message]) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fail(self, exc: Exception) -> CtxprobeError:
        from ctxprobe.redaction import scrub

        text = " ".join(scrub(str(exc), (self._secret,)).split())[:200]
        return CtxprobeError(f"{self.name}: token counting failed: {type(exc).__name__}: {text}")

    def count_chat(self, messages: list[Message]) -> int:
        messages = fold_prefill(messages)  # the provider sends an answer prefix in the user turn
        blob = json.dumps(messages, ensure_ascii=False, sort_keys=True)
        key = hashlib.sha256(blob.encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        n = self._api_count(messages)
        self.text.observe(messages, n)
        with self._lock:
            self._cache[key] = n
            if len(self._cache) > _CACHE_MAX:
                self._cache.popitem(last=False)
        return n

    def encode_chat(self, messages: list[Message]) -> list[int]:
        return [UNKNOWN_ID] * self.count_chat(messages)

    def render_chat(self, messages: list[Message]) -> str:
        return self.text.render_chat(messages)

    def count(self, text: str) -> int:
        return self.text.count(text)

    def count_many(self, texts: list[str]) -> list[int]:
        return self.text.count_many(texts)

    def encode(self, text: str) -> list[int]:
        return self.text.encode(text)
