"""``gemini:MODEL[?thinking=N]``: Gemini through the official ``google-genai`` SDK.

Key from ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``; endpoint from the ``base_url`` option,
else ``GEMINI_BASE_URL``, else the SDK default. The SDK's retries are off
(``HttpRetryOptions(attempts=1)``, which also stops its implicit connection retries): the
runner retries. ``errors.APIError.code`` 408/429/5xx and network failures are transient
(Retry-After, or the ``RetryInfo.retryDelay`` Google puts in the error body); other codes
are permanent.

Prompt caching: Gemini 2.5 models cache shared prefixes implicitly (reported as
``usage_metadata.cached_content_token_count``); older models, or any with
``--cache-prompt explicit``, get explicit ``CachedContent`` caches for a prefix group's
shared text (:mod:`ctxprobe.providers.gemini.cache`): created, reused and deleted here.

A tools layout's conversation (docs/layouts.md) is sent with its explicit caches left out
(whole; implicit caching still applies).

System messages become ``system_instruction``; assistant turns use Gemini's ``model``
role; a tools layout's tool calls are ``function_call`` parts of model turns and their
results ``function_response`` parts of the next user turn, the tool declared in
``tools`` (``function_declarations``; :func:`ctxprobe.core.tools.gemini_turns`). ``?thinking=N`` sets ``thinking_config.thinking_budget`` (0 turns thinking off on
models that allow it; Gemini 3 is sent ``thinking_level`` instead, MINIMAL to HIGH by the
budget: :func:`thinking_level`) with ``include_thoughts`` so thought parts come back and are stored
as reasoning; ``max_output_tokens`` counts thoughts too, so it is ``max_tokens + N``.
A reasoning budget from the sweep's grid (``GenerateRequest.reasoning_budget``) is sent
the same way, replacing ``?thinking``; the thought tokens billed
(``usage_metadata.thoughts_token_count``) are kept as the reply's reasoning tokens. The
prompt's tokens are the first request's (``initial_prompt_token_count``), not the sum the
SDK's automatic continuation adds up over its hops.
"""

from __future__ import annotations

import re
from typing import Any

from ctxprobe.core.tools import gemini_tools, gemini_turns, has_tool_calls
from ctxprobe.models._sdk import (
    import_sdk,
    is_transport_error,
    one_line,
    retry_after_from,
    status_is_transient,
)
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, TransientError
from ctxprobe.providers.gemini.cache import ExplicitCaches, cut_messages
from ctxprobe.providers.gemini.thinking import refusal as thinking_refusal
from ctxprobe.providers.gemini.thinking import thinking_range
from ctxprobe.providers.gemini.options import GeminiOptions
from ctxprobe.models.reasoning import finalize
from ctxprobe.models.sdk_provider import SDKProvider
from ctxprobe.spec.names import ModelRef
from ctxprobe.plan.caching import cache_rules
from ctxprobe.tokenizers.base import Message, fold_prefill

PREFIX = "gemini:"
API_KEY_ENV: tuple[str, ...] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
BASE_URL_ENV = "GEMINI_BASE_URL"

#: Every ``types.FinishReason`` google-genai 3.6.1 lists, in the OpenAI vocabulary the
#: scoring layer reads: ``CONTINUATION`` (the model stopped to be continued: the SDK follows
#: it live, a batch item keeps it) is an output cut short, like ``MAX_TOKENS``; the filters
#: are ``content_filter``; the rest are kept, lower-cased, as failures of their own.
FINISH_REASONS: dict[str, str] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "CONTINUATION": "length",
    **{r: "content_filter" for r in ("SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII",
                                     "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR")},
    **{r: r.lower() for r in ("FINISH_REASON_UNSPECIFIED", "LANGUAGE", "OTHER", "MALFORMED_FUNCTION_CALL",
                              "IMAGE_OTHER", "NO_IMAGE", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
                              "MISSING_THOUGHT_SIGNATURE", "MALFORMED_RESPONSE", "ESCALATION",
                              "PUP_LIMITED_DISABLED")},
}
#: Reasoning budget (tokens) → Gemini 3's ``thinking_level`` (google-genai's ``ThinkingLevel``):
#: the largest budget each level is sent for; larger budgets get ``HIGH``.
LEVEL_CEILINGS: tuple[tuple[int, str], ...] = ((1024, "MINIMAL"), (4096, "LOW"), (16384, "MEDIUM"))


def thinking_level(budget: int) -> str:
    """The ``thinking_level`` a reasoning budget above 0 is sent as to a Gemini 3 model."""
    for ceiling, level in LEVEL_CEILINGS:
        if budget <= ceiling:
            return level
    return "HIGH"


def _get(d: dict[str, Any], snake: str) -> Any:
    """A field by its SDK (snake_case) or REST (camelCase) name: recorded JSON uses either."""
    if snake in d:
        return d[snake]
    head, *rest = snake.split("_")
    return d.get(head + "".join(w.capitalize() for w in rest))


def to_contents(messages: list[Message], *, sign: bool = False) -> tuple[str | None, list[dict[str, Any]]]:
    """Chat messages → (system_instruction, Gemini ``contents``); a tools layout's calls and
    results as ``function_call``/``function_response`` parts (:func:`ctxprobe.core.tools.gemini_turns`;
    ``sign``: Gemini 3's documented signature for calls it did not make)."""
    return gemini_turns(messages, sign=sign)


def parse_response(data: dict[str, Any]) -> GenerateResult:
    """A generateContent response (SDK dump or raw REST JSON) → GenerateResult."""
    candidates = _get(data, "candidates") or []
    usage = _get(data, "usage_metadata") or {}
    prompt_tokens = _get(usage, "prompt_token_count")
    completion = [_get(usage, k) for k in ("candidates_token_count", "thoughts_token_count")]
    completion_tokens = sum(c for c in completion if isinstance(c, int)) if any(
        isinstance(c, int) for c in completion) else None
    extra: dict[str, object] = {}
    if _get(data, "model_version"):
        extra["model"] = _get(data, "model_version")
    thoughts = _get(usage, "thoughts_token_count") if isinstance(usage, dict) else None
    if isinstance(thoughts, int) and not isinstance(thoughts, bool):
        extra["reasoning_tokens"] = thoughts
    cached = _get(usage, "cached_content_token_count") if isinstance(usage, dict) else None
    if isinstance(cached, int) and not isinstance(cached, bool):
        extra["cached_prompt_tokens"] = cached
    if not candidates:
        feedback = _get(data, "prompt_feedback") or {}
        blocked = _get(feedback, "block_reason") if isinstance(feedback, dict) else None
        if blocked:  # the prompt itself was refused: an answer of nothing, labelled so
            return finalize("", "content_filter", prompt_tokens=prompt_tokens, extra={**extra, "block_reason": blocked})
        raise PermanentError("malformed response from gemini: no candidates")
    cand = candidates[0]
    parts = (_get(cand, "content") or {}).get("parts") or []
    text = "".join(p.get("text") or "" for p in parts if isinstance(p, dict) and not p.get("thought"))
    thoughts = "\n".join(p.get("text") or "" for p in parts if isinstance(p, dict) and p.get("thought"))
    reason = _get(cand, "finish_reason")
    reason = str(getattr(reason, "value", reason)) if reason is not None else None
    return finalize(
        text,
        FINISH_REASONS.get(reason, reason.lower()) if reason else None,
        prompt_tokens=prompt_tokens if isinstance(prompt_tokens, int) else None,
        completion_tokens=completion_tokens,
        api_reasoning=thoughts or None,
        extra=extra,
    )


def _retry_delay(details: Any) -> float | None:
    """``RetryInfo.retryDelay`` ("17s") from a Google error body, if present."""
    err = details.get("error", details) if isinstance(details, dict) else None
    for item in (err or {}).get("details") or []:
        delay = item.get("retryDelay") if isinstance(item, dict) else None
        if isinstance(delay, str) and (m := re.fullmatch(r"(\d+(?:\.\d+)?)s", delay.strip())):
            return float(m.group(1))
    return None


def classify_error(exc: BaseException, genai_errors: Any, where: str, secrets: tuple[str | None, ...]) -> Exception | None:
    """google-genai / transport exceptions → TransientError / PermanentError (or None)."""
    if isinstance(exc, genai_errors.APIError):
        code = int(exc.code) if exc.code else None
        message = exc.message or exc.status or str(exc)
        reason = f"HTTP {code} from {where}: {one_line(message, secrets)}"
        if status_is_transient(code):
            headers = getattr(getattr(exc, "response", None), "headers", None)
            return TransientError(reason, retry_after=retry_after_from(headers) or _retry_delay(exc.details))
        return PermanentError(reason)
    if is_transport_error(exc):
        return TransientError(f"connection error talking to {where}: {type(exc).__name__}: {one_line(str(exc), secrets)}")
    return None


class GeminiProvider(SDKProvider):
    """generateContent through ``google.genai.Client(...).aio``."""

    provider = "gemini"
    sdk = ("google.genai", "google-genai", "gemini")
    options_model = GeminiOptions
    api_key_env = API_KEY_ENV
    base_url_env = BASE_URL_ENV
    default_host = "generativelanguage.googleapis.com"
    example = "gemini-2.5-flash"
    options: GeminiOptions
    #: A tools layout's conversation as function_call/function_response parts, its tool declared.
    sends_tool_messages = True

    def __init__(self, model: str, options: GeminiOptions, *, name: str | None = None,
                 context_window: int | None = None) -> None:
        super().__init__(model, options, name=name, context_window=context_window)
        purpose = f"The model 'gemini:{model}'"
        self._genai = self._sdk
        self._types = import_sdk("google.genai.types", "google-genai", "gemini", purpose)
        self._errors = import_sdk("google.genai.errors", "google-genai", "gemini", purpose)
        #: What ``models.get`` stated of the model (:meth:`read_model_facts`), once read.
        self.facts: dict[str, Any] | None = None
        self._caches = {flag: ExplicitCaches(model, self._types, cache_rules(self.name, explicit=flag))
                        for flag in (False, True)}

    def _make_client(self) -> Any:
        http = self._types.HttpOptions(
            base_url=self.base_url,
            timeout=int(self.options.timeout * 1000),  # milliseconds
            retry_options=self._types.HttpRetryOptions(attempts=1),
        )
        return self._genai.Client(api_key=self._api_key, http_options=http)

    def reasoning_refusal(self, budget: int) -> str | None:
        """Budgets above 0 go to thinking models within the range Google gives for each;
        0 is refused where thinking cannot be turned off (:mod:`ctxprobe.providers.gemini.thinking`);
        ``models.get``'s ``thinking: false``, once read, is the model's own word."""
        if budget > 0 and self.facts is not None and self.facts.get("thinking") is False:
            return (f"{self.name} does not think (Gemini's models.get says thinking: false), so a reasoning budget "
                    f"of {budget:,} tokens would change nothing: give --reasoning-budgets 0 or drop the flag")
        return thinking_refusal(self.name, self.model, budget)

    def request_config(self, request: GenerateRequest, cached_content: str | None = None,
                       messages: list[Message] | None = None) -> tuple[list[dict[str, Any]], Any]:
        """(contents, GenerateContentConfig) for one request; with ``cached_content``,
        ``messages`` are what follows the cached prefix."""
        # an answer prefix joins the user turn
        system, contents = to_contents(messages if messages is not None else fold_prefill(request.messages),
                                       sign=thinking_range(self.model).levels)
        budget = request.reasoning_budget if request.reasoning_budget is not None else self.options.thinking
        config: dict[str, Any] = {
            "max_output_tokens": request.max_tokens + (budget or 0),
            "temperature": request.temperature,
        }
        if system is not None:
            config["system_instruction"] = system
        if (tools := gemini_tools(request.messages)) is not None:
            config["tools"] = tools  # a tools layout's conversation: the tool its calls name, declared
        if cached_content is not None:
            config["cached_content"] = cached_content
        if request.seed is not None:
            config["seed"] = request.seed
        if request.top_p is not None:
            config["top_p"] = request.top_p
        if budget is not None and budget > 0 and thinking_range(self.model).levels:
            # Gemini 3: thinking_level is the control (thinking_budget only taken for compatibility)
            config["thinking_config"] = self._types.ThinkingConfig(thinking_level=thinking_level(budget),
                                                                   include_thoughts=True)
        elif budget is not None and (budget > 0 or thinking_range(self.model).thinks):
            # a model that does not think gets budget 0 as a plain request (no thinking_config)
            config["thinking_config"] = self._types.ThinkingConfig(thinking_budget=budget, include_thoughts=budget > 0)
        return contents, self._types.GenerateContentConfig(**config)

    async def read_model_facts(self) -> tuple[dict[str, Any], list[str]]:
        """What Gemini's ``models.get`` states of the model (``thinking``, the token limits),
        read once per run and stored with it; a model it says does not think is then sent
        budget 0 only (:meth:`reasoning_refusal`)."""
        if self.facts is None:
            client = self._client_for_loop()
            model = await self._call(lambda: client.aio.models.get(model=self.model))
            thinking = getattr(model, "thinking", None)
            self.facts = {"source": "Gemini's models.get", "thinking": thinking if isinstance(thinking, bool) else None,
                          "input_token_limit": getattr(model, "input_token_limit", None),
                          "output_token_limit": getattr(model, "output_token_limit", None)}
        return self.facts, []

    async def advertised_window(self) -> int | None:
        """The prompt limit the model endpoint states (``models.get``: ``input_token_limit``),
        read when neither the library nor a price file gives a window (once per run)."""
        facts, _ = await self.read_model_facts()
        limit = facts.get("input_token_limit")
        return limit if isinstance(limit, int) and limit > 0 else None

    async def _call(self, coro_factory: Any) -> Any:
        secrets = (self._api_key,)
        try:
            return await coro_factory()
        except Exception as exc:
            mapped = classify_error(exc, self._errors, self._where, secrets)
            if mapped is None:
                raise
            raise mapped from None

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        client = self._client_for_loop()
        hint = request.cache
        caches = self._caches[bool(hint and hint.explicit)]
        explicit = caches.rules.mechanism == "explicit"
        async with self._gate.enter(hint if caches.rules.mechanism != "none" else None):
            written, response = await self._send(client, request, caches if explicit else None)
        if hint is not None and explicit and self._gate.finished(hint):
            await caches.delete_group(client, hint.key)  # the group is done: stop paying its storage
        try:
            data = response.model_dump(mode="json", exclude_none=True)
        except Exception as exc:
            raise PermanentError(f"malformed response from {self._where}: {one_line(str(exc), (self._api_key,))}") from None
        result = parse_response(data)
        # the first request's prompt, not the sum over automatic-continuation hops (google-genai
        # 3.6's merge_continuation_responses adds every hop's prompt_token_count)
        initial = getattr(response, "initial_prompt_token_count", None)
        if isinstance(initial, int) and not isinstance(initial, bool):
            result.prompt_tokens = initial
        if written:
            result.extra["cache_write_tokens"] = written
        return result

    async def _send(self, client: Any, request: GenerateRequest, caches: ExplicitCaches | None) -> tuple[int, Any]:
        """(tokens written to a new explicit cache, the response)."""
        hint = request.cache
        # a tools layout's conversation is sent whole: a cut would split a function response
        # (one object) and its declaration would have to move into the cache
        mark = caches.mark_for(hint) if caches is not None and not has_tool_calls(request.messages) else None
        cut = cut_messages(fold_prefill(request.messages), mark) if mark is not None else None
        name = None
        if caches is not None and hint is not None and mark is not None and cut is not None \
                and not caches.refused(hint, mark):
            system, cached_contents = to_contents(cut[0])
            try:
                name, written = await self._call(lambda: caches.name_for(client, hint, mark, system, cached_contents))
            except PermanentError:  # refused (e.g. shorter than the model's minimum by its count): sent whole
                caches.refuse(hint, mark)
        if caches is None or hint is None or cut is None or name is None:
            contents, config = self.request_config(request)
            return 0, await self._call(
                lambda: client.aio.models.generate_content(model=self.model, contents=contents, config=config))
        contents, config = self.request_config(request, cached_content=name, messages=cut[1])
        try:
            return written, await self._call(
                lambda: client.aio.models.generate_content(model=self.model, contents=contents, config=config))
        except PermanentError as err:
            if "HTTP 404" in str(err) or "HTTP 403" in str(err):  # the cache is gone: made again on the retry
                caches.forget(hint)
                raise TransientError(f"{err} (its context cache is gone: it is created again)") from None
            raise

    async def count_tokens(self, messages: list[Message]) -> int:
        """The API's count (``models.count_tokens``). The Developer API's countTokens
        takes no system instruction, so a system message is counted as a leading user
        turn: exact for ctxprobe's single-user-message prompts, a few tokens off otherwise. A
        tools layout's calls and results are sent as parts; its tool declaration cannot be
        (google-genai refuses ``tools`` in the Developer API's count), so it is not counted."""
        client = self._client_for_loop()
        system, contents = to_contents(fold_prefill(messages))
        if system is not None:
            contents = [{"role": "user", "parts": [{"text": system}]}, *contents]
        result = await self._call(lambda: client.aio.models.count_tokens(model=self.model, contents=contents))
        return int(result.total_tokens or 0)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            for caches in self._caches.values():
                if caches.live:
                    try:
                        await caches.delete_group(client)
                    except RuntimeError:
                        pass
            close = getattr(client.aio, "aclose", None)
            try:
                if close is not None:
                    await close()
            except RuntimeError:
                pass


def make_provider(ref: ModelRef, *, options: dict[str, object] | None = None, **_: Any) -> GeminiProvider:
    """The factory the declaration names (``factory(ref, *, tokenizer, n_ctx, options)``): the
    provider of the parsed reference, its name and options as parsed."""
    return GeminiProvider.from_ref(ref, dict(options or {}))
