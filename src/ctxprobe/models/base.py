"""The one thin provider protocol.

A provider turns a chat request into one model reply. Retries, concurrency, timeouts,
caching and accounting live once, in the runner: a provider only raises
:class:`TransientError` (worth retrying) or :class:`PermanentError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ctxprobe.tokenizers.base import Message


@dataclass(frozen=True)
class GenerateRequest:
    messages: list[Message]
    max_tokens: int
    temperature: float = 0.0
    seed: int | None = None
    top_p: float | None = None  # None: not sent (the server's default)
    #: Token ids of the templated prompt when the caller already has them; in-process
    #: providers use them as-is so the model sees exactly what was counted.
    prompt_ids: list[int] | None = None


@dataclass
class GenerateResult:
    text: str
    finish_reason: str | None = None  # "stop" | "length" | ...
    prompt_tokens: int | None = None  # as reported by the server / runtime
    completion_tokens: int | None = None
    extra: dict[str, object] = field(default_factory=dict)


def cached_prompt_tokens(data: object) -> int | None:
    """Prompt tokens the server says it served from its prefix/prompt cache, if it says.

    Read from whichever field the API uses: OpenAI, vLLM, SGLang and recent llama.cpp
    ``usage.prompt_tokens_details.cached_tokens``; llama.cpp's ``timings.cache_n``;
    Anthropic ``usage.cache_read_input_tokens``; Gemini ``cached_content_token_count``.
    ``None`` when the response carries none of them (not the same as 0)."""
    if not isinstance(data, dict):
        return None
    usage = u if isinstance(u := data.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    candidates = [
        details.get("cached_tokens") if isinstance(details, dict) else None,
        t.get("cache_n") if isinstance(t := data.get("timings"), dict) else None,
        usage.get("cache_read_input_tokens"),
        m.get("cached_content_token_count") if isinstance(m := data.get("usage_metadata"), dict) else None,
    ]
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


class TransientError(Exception):
    """A failure worth retrying (429, 5xx, dropped connection, timeout)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(Exception):
    """A failure that retrying will not fix (4xx other than 429, bad response)."""


@runtime_checkable
class Provider(Protocol):
    #: The model spec string, e.g. ``sim:perfect`` or ``openai-compat:qwen@http://...``.
    name: str
    #: Largest number of requests the provider can usefully take at once (None: no limit).
    max_concurrency: int | None
    #: The model's context window if known (prompt + output tokens).
    context_window: int | None
    # Optional, with a default where absent: ``ids_policy`` ("drop" | "compact" | "keep",
    # default "compact"), what the provider needs of a case's prompt ids (models.ids_policy).

    async def generate(self, request: GenerateRequest) -> GenerateResult: ...

    async def aclose(self) -> None: ...
