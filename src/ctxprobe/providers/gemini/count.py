"""``gemini-count:MODEL``: Gemini's ``models.count_tokens`` as a tokenizer
(:mod:`ctxprobe.tokenizers.api_count`: exact chat counts, calibrated text estimates)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxprobe.errors import MissingExtraError
from ctxprobe.tokenizers.api_count import APICountTokenizer, api_key_from
from ctxprobe.tokenizers import bad_tokenizer
from ctxprobe.tokenizers.base import Message, Tokenizer

if TYPE_CHECKING:
    from google.genai.types import ContentDict  # the gemini extra; only for this annotation


def gemini_count(name: str, rest: str) -> Tokenizer:
    """The ``gemini-count`` scheme (registered with the provider's declaration)."""
    if not rest:
        raise bad_tokenizer(name, "gemini-count needs a model name, e.g. gemini-count:MODEL")
    return GeminiCountTokenizer(rest, name=name)


class GeminiCountTokenizer(APICountTokenizer):
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
        self._secret = api_key_from(("GEMINI_API_KEY", "GOOGLE_API_KEY"), self.name)
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
