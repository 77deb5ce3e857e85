"""``openai:MODEL[?options]``: the OpenAI API through the official ``openai`` SDK.

Key from ``OPENAI_API_KEY``; endpoint from the ``base_url`` option, else
``OPENAI_BASE_URL``, else the SDK's default. The SDK's own retries are off
(``max_retries=0``): the runner owns retries, so a failure is only *classified* here
(429/408/409/5xx, connection errors and timeouts → :class:`TransientError` with the
server's Retry-After; other 4xx → :class:`PermanentError`).

Prompt caching is automatic for prefixes of 1,024 tokens and more; a request of a prefix
group (:class:`~ctxprobe.core.prefix.CacheHint`) sends the group's ``prompt_cache_key`` so
its requests land where the prefix is cached, and the cached share comes back as
``usage.prompt_tokens_details.cached_tokens`` (stored, billed at the cached price).

Reasoning models (o1/o3/o4, gpt-5…; or ``?reasoning=true``) reject ``temperature`` and
``max_tokens``: they get ``max_completion_tokens = max_tokens + thinking`` (the thinking
budget sits on top of the answer budget) and the optional ``reasoning_effort``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ctxprobe.models._sdk import api_key_from_env, classify_stainless_error, import_sdk, one_line
from ctxprobe.models.base import (
    GenerateRequest,
    GenerateResult,
    PermanentError,
    ProviderBase,
    TransientError,
    cached_prompt_tokens,
)
from ctxprobe.models.caching import PrefixGate
from ctxprobe.models.options import OpenAIOptions, parse_options, split_options
from ctxprobe.models.reasoning import finalize
from ctxprobe.tokenizers.base import fold_prefill

PREFIX = "openai:"
API_KEY_ENV: tuple[str, ...] = ("OPENAI_API_KEY",)
BASE_URL_ENV = "OPENAI_BASE_URL"
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def is_reasoning_model(model: str) -> bool:
    """OpenAI reasoning families: they take max_completion_tokens and no temperature."""
    name = model.lower().split("/")[-1]
    return name.startswith(_REASONING_PREFIXES)


def parse_chat_completion(data: dict[str, Any]) -> GenerateResult:
    """An OpenAI chat completion (as a dict) → GenerateResult, reasoning split off.

    Pure, so it is tested on recorded JSON as well as over loopback. Reasoning text comes
    from ``message.reasoning_content`` (vLLM, DeepSeek), ``message.reasoning`` (OpenRouter,
    Ollama) or inline ``<think>`` tags; OpenAI itself only reports the token count."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise PermanentError("malformed response from openai: no choices")
    choice = choices[0]
    message = m if isinstance(m := choice.get("message"), dict) else {}
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise PermanentError("malformed response from openai: message content is not a string")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    usage = u if isinstance(u := data.get("usage"), dict) else {}
    details = usage.get("completion_tokens_details") or {}
    extra: dict[str, object] = {k: data[k] for k in ("id", "model", "system_fingerprint") if data.get(k)}
    if isinstance(details, dict) and details.get("reasoning_tokens"):
        extra["reasoning_tokens"] = details["reasoning_tokens"]
    if message.get("refusal"):
        extra["refusal"] = message["refusal"]
    if (cached := cached_prompt_tokens(data)) is not None:
        extra["cached_prompt_tokens"] = cached
    return finalize(
        content or "",
        choice.get("finish_reason"),
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        api_reasoning=reasoning if isinstance(reasoning, str) else None,
        extra=extra,
    )


class OpenAIProvider(ProviderBase):
    """Chat completions through ``openai.AsyncOpenAI`` (one client per event loop)."""

    #: What it needs of a case's prompt ids (:func:`ctxprobe.models.ids_policy`): none,
    #: the server tokenizes.
    ids_policy = "drop"

    max_concurrency: int | None = None

    def __init__(self, model: str, options: OpenAIOptions, *, name: str | None = None,
                 context_window: int | None = None) -> None:
        self._sdk = import_sdk("openai", "openai", "openai", f"The model 'openai:{model}'")
        self.model = model
        self.options = options
        self.name = name or f"{PREFIX}{model}"
        self.context_window = context_window
        self._api_key = api_key_from_env(API_KEY_ENV, f"openai:{model}")
        self.base_url = (options.base_url or os.environ.get(BASE_URL_ENV, "").strip() or None)
        self._where = self.base_url or "api.openai.com"
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._gate = PrefixGate()  # a group's first request answers before the rest read its prefix
        self._cache_key = True  # send prompt_cache_key (False once the endpoint refused it)

    @classmethod
    def from_spec(cls, spec: str, options: dict[str, Any] | None = None) -> OpenAIProvider:
        base, query = split_options(spec)
        model = base[len(PREFIX):]
        if not model:
            from ctxprobe.errors import CtxprobeError

            raise CtxprobeError(f"bad model spec '{spec}': expected openai:MODEL, e.g. openai:gpt-4o-mini")
        return cls(model, parse_options(OpenAIOptions, spec, query, options), name=spec)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIProvider({self.name!r})"

    def _client_for_loop(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = self._sdk.AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0,
                timeout=self.options.timeout,
            )
            self._client_loop = loop
        return self._client

    def request_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for one request."""
        reasoning = self.options.reasoning
        if reasoning is None:
            reasoning = is_reasoning_model(self.model) or self.options.reasoning_effort is not None
        # no prefill in OpenAI's API: an answer prefix joins the user turn (as RULER's client sends it)
        body: dict[str, Any] = {"model": self.model, "messages": fold_prefill(list(request.messages))}
        if reasoning:
            body["max_completion_tokens"] = request.max_tokens + (self.options.thinking or 0)
            if self.options.reasoning_effort is not None:
                body["reasoning_effort"] = self.options.reasoning_effort
        else:
            body["max_tokens"] = request.max_tokens + (self.options.thinking or 0)
            body["temperature"] = request.temperature
            if request.top_p is not None:
                body["top_p"] = request.top_p
        if request.seed is not None:
            body["seed"] = request.seed
        if request.cache is not None and self._cache_key:
            # caching is automatic; the key routes a group's requests to where its prefix is cached
            if self._sdk_takes("prompt_cache_key"):
                body["prompt_cache_key"] = request.cache.key
            else:  # an SDK older than the parameter: the same field, sent as is
                body["extra_body"] = {"prompt_cache_key": request.cache.key}
        return body

    def _sdk_takes(self, name: str) -> bool:
        import inspect

        create = self._sdk.resources.chat.completions.AsyncCompletions.create
        return name in inspect.signature(create).parameters

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        client = self._client_for_loop()
        secrets = (self._api_key,)
        try:
            async with self._gate.enter(request.cache):
                response = await client.chat.completions.create(**self.request_body(request))
        except Exception as exc:  # classify SDK errors; anything else is a bug: re-raise
            mapped = classify_stainless_error(exc, self._sdk, self._where, secrets)
            if mapped is None:
                raise
            if isinstance(mapped, PermanentError) and "prompt_cache_key" in str(mapped) and self._cache_key:
                # an endpoint that does not know the parameter (a proxy, an older API): retried without it
                self._cache_key = False
                raise TransientError(f"{mapped} (sent again without prompt_cache_key)") from None
            raise mapped from None
        try:
            data = response.model_dump(mode="json", exclude_unset=False)
        except Exception as exc:  # a 2xx the SDK could not make sense of
            raise PermanentError(f"malformed response from {self._where}: {one_line(str(exc), secrets)}") from None
        return parse_chat_completion(data)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except RuntimeError:  # its loop is gone; the sockets went with it
                pass


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
