"""``anthropic-count:MODEL`` / ``gemini-count:MODEL``: provider token-counting APIs.

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
from typing import TYPE_CHECKING, Any

from ctxprobe.errors import CtxprobeError, MissingExtraError
from ctxprobe.tokenizers.approx import ApproxTokenizer
from ctxprobe.tokenizers.base import Message, TokenizerBase, fold_prefill

if TYPE_CHECKING:
    from google.genai.types import ContentDict  # the gemini extra; only for this annotation

UNKNOWN_ID = -1
_CACHE_MAX = 256


def _key(env: tuple[str, ...], who: str) -> str:
    for var in env:
        if os.environ.get(var, "").strip():
            return os.environ[var].strip()
    raise CtxprobeError(f"{who} needs an API key: set {' or '.join(env)} in the environment")


class _APICountTokenizer(TokenizerBase):
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


class AnthropicCountTokenizer(_APICountTokenizer):
    """``messages.count_tokens``; system messages go in ``system`` as for generation, a
    tools layout's conversation as ``tool_use``/``tool_result`` blocks with its tool
    declared, as for generation (:func:`ctxprobe.core.tools.anthropic_turns`)."""

    #: Counts tool calls, tool results and the tool declaration as the request sends them.
    counts_tool_messages = True

    def __init__(self, model: str, name: str | None = None, base_url: str | None = None) -> None:
        super().__init__(name or f"anthropic-count:{model}", model)
        try:
            import anthropic
        except ImportError:
            raise MissingExtraError("anthropic", "anthropic", f"The {self.name} tokenizer") from None
        self._sdk = anthropic
        self._secret = _key(("ANTHROPIC_API_KEY",), self.name)
        url = base_url or os.environ.get("ANTHROPIC_BASE_URL", "").strip() or None
        kwargs: dict[str, Any] = {"api_key": self._secret, "max_retries": 2, "timeout": 120.0}
        if url:
            kwargs["base_url"] = url
        self._client = anthropic.Anthropic(**kwargs)

    def _api_count(self, messages: list[Message]) -> int:
        from ctxprobe.core.tools import anthropic_tools, anthropic_turns

        system, rest = anthropic_turns(messages)
        kwargs: dict[str, Any] = {"model": self.model, "messages": rest}
        if system is not None:
            kwargs["system"] = system
        if (tools := anthropic_tools(messages)) is not None:
            kwargs["tools"] = tools
        try:
            return int(self._client.messages.count_tokens(**kwargs).input_tokens)
        except self._sdk.APIError as exc:
            raise self._fail(exc) from None


class GeminiCountTokenizer(_APICountTokenizer):
    """``models.count_tokens``; the Developer API takes no system instruction there, so a
    system message is counted as a leading user turn (exact for single-user prompts)."""

    def __init__(self, model: str, name: str | None = None, base_url: str | None = None) -> None:
        super().__init__(name or f"gemini-count:{model}", model)
        try:
            from google import genai
            from google.genai import errors, types
        except ImportError:
            raise MissingExtraError("google-genai", "gemini", f"The {self.name} tokenizer") from None
        self._errors = errors
        self._secret = _key(("GEMINI_API_KEY", "GOOGLE_API_KEY"), self.name)
        url = base_url or os.environ.get("GEMINI_BASE_URL", "").strip() or None
        http = types.HttpOptions(base_url=url, timeout=120_000, retry_options=types.HttpRetryOptions(attempts=3))
        self._client = genai.Client(api_key=self._secret, http_options=http)

    def _api_count(self, messages: list[Message]) -> int:
        contents: list[ContentDict] = [
            {"role": "model" if m["role"] == "assistant" else "user", "parts": [{"text": m["content"]}]}
            for m in sorted(messages, key=lambda m: m["role"] != "system")]
        try:
            return int(self._client.models.count_tokens(model=self.model, contents=contents).total_tokens or 0)
        except self._errors.APIError as exc:
            raise self._fail(exc) from None
