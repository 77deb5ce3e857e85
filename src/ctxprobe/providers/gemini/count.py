"""``gemini-count:MODEL``: Gemini's ``models.count_tokens`` as a tokenizer
(:mod:`ctxprobe.tokenizers.api_count`: exact chat counts, calibrated text estimates)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxprobe.core.tools import gemini_turns, has_tool_calls
from ctxprobe.errors import MissingExtraError
from ctxprobe.tokenizers.api_count import APICountTokenizer
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
    system message is counted as a leading user turn (exact for single-user prompts). A tools
    layout's calls and results are sent as ``function_call``/``function_response`` parts, but
    google-genai (3.6) refuses ``tools`` in the Developer API's count (``tools parameter is
    only supported in Gemini Enterprise Agent Platform mode``), so the declaration cannot be
    counted: ``--layout tools`` is refused with this tokenizer (:attr:`tools_refusal`)."""

    def __init__(self, model: str, name: str | None = None, base_url: str | None = None) -> None:
        super().__init__(name or f"gemini-count:{model}", model)
        try:
            from google import genai
            from google.genai import errors, types
        except ImportError:
            raise MissingExtraError("google-genai", "gemini", f"The {self.name} tokenizer") from None
        self._errors = errors
        kw = self._client_kwargs(("GEMINI_API_KEY", "GOOGLE_API_KEY"), "GEMINI_BASE_URL", base_url)
        # google-genai's names: milliseconds, and attempts counting the first
        http = types.HttpOptions(base_url=kw.get("base_url"), timeout=round(kw["timeout"] * 1000),
                                 retry_options=types.HttpRetryOptions(attempts=kw["max_retries"] + 1))
        self._client = genai.Client(api_key=kw["api_key"], http_options=http)

    #: Why ``--layout tools`` cannot be counted here (:func:`ctxprobe.core.tools.check_renders_tools`).
    tools_refusal = ("tokenizer gemini-count cannot count the tool declaration: google-genai refuses tools in "
                     "the Gemini Developer API's count_tokens (tool calls and results alone would be counted)")

    def _api_count(self, messages: list[Message]) -> int:
        contents: list[ContentDict]
        if has_tool_calls(messages):  # calls and results as the request's parts (the declaration cannot go)
            system, turns = gemini_turns(messages)
            lead: list[Any] = [{"role": "user", "parts": [{"text": system}]}] if system is not None else []
            contents = lead + list[Any](turns)
        else:
            contents = [{"role": "model" if m["role"] == "assistant" else "user", "parts": [{"text": m["content"]}]}
                        for m in sorted(messages, key=lambda m: m["role"] != "system")]
        try:
            return int(self._client.models.count_tokens(model=self.model, contents=contents).total_tokens or 0)
        except self._errors.APIError as exc:
            raise self._fail(exc) from None
