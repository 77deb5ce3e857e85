"""``openai:MODEL[?options]``: the OpenAI API through the official ``openai`` SDK.

Key from ``OPENAI_API_KEY``; endpoint from the ``base_url`` option, else
``OPENAI_BASE_URL``, else the SDK's default. The SDK's own retries are off
(``max_retries=0``): the runner owns retries, so a failure is only *classified* here
(429/408/409/5xx, connection errors and timeouts → :class:`TransientError` with the
server's Retry-After; other 4xx → :class:`PermanentError`).

Prompt caching is automatic for prefixes of 1,024 tokens and more; a request of a prefix
group (:class:`~ctxprobe.core.prefix.CacheHint`) sends the group's ``prompt_cache_key`` so
its requests land where the prefix is cached, and the cached share comes back as
``usage.prompt_tokens_details.cached_tokens`` (stored, billed at the cached price); what was
written to the cache as ``cache_write_tokens`` (openai 3.60, chat and Responses alike;
stored, billed at genai-prices' cache-write price where it has one: gpt-5.6 and gpt-6).

Reasoning models (the families :data:`~ctxprobe.providers.openai.responses.EFFORT_TABLE` lists
effort levels for: o-series, gpt-5 and later, gpt-6-sol and the other gpt-6 models the SDK's
``ChatModel`` lists; or ``?reasoning=true``) go through the Responses API
(:mod:`ctxprobe.providers.openai.responses`; ``?api=chat`` keeps chat completions, except for
the pro models, served there only): ``max_output_tokens = max_tokens + thinking`` (the
thinking budget sits on top of the answer budget), ``reasoning.effort`` (the levels each
model takes are checked before anything is sent), no ``temperature``. On chat completions
they get ``max_completion_tokens`` and ``reasoning_effort`` the same way.

A reasoning budget from the sweep's grid (``GenerateRequest.reasoning_budget``) maps to
the two controls OpenAI has, since its API takes no token budget for thinking itself:
``max_completion_tokens = max_tokens + budget`` (a hard cap on reasoning + answer: a reply
that runs out while thinking comes back empty with ``finish_reason="length"``) and
``reasoning_effort`` from the budget (:func:`effort_for`) unless ``?reasoning_effort=`` is
given (the level nearest to it that the model takes: a pro model's is always ``high``). A
model that does not reason (gpt-4o, gpt-4.1…) takes budget 0 only (a plain request); budget
0 is sent as the model's lowest listed "off" (``none``, else ``minimal``), and refused
before anything is sent where it lists neither (o-series, pro models: reasoning cannot be
turned off).
"""

from __future__ import annotations

from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.models._sdk import classify_stainless_error, one_line
from ctxprobe.models.base import (
    GenerateRequest,
    GenerateResult,
    PermanentError,
    TransientError,
    cached_prompt_tokens,
)
from ctxprobe.providers.openai.responses import (
    cache_write_tokens,
    efforts_for,
    has_efforts,
    is_pro,
    nearest_effort,
    options_refusal,
    parse_response,
    responses_body,
    responses_only,
    sdk_facts,
)
from ctxprobe.providers.openai.options import OpenAIOptions
from ctxprobe.models.reasoning import finalize
from ctxprobe.models.sdk_provider import SDKProvider
from ctxprobe.spec.names import ModelRef
from ctxprobe.core.tools import declared_tools
from ctxprobe.tokenizers.base import fold_prefill

PREFIX = "openai:"
API_KEY_ENV: tuple[str, ...] = ("OPENAI_API_KEY",)
BASE_URL_ENV = "OPENAI_BASE_URL"


#: Reasoning budget (tokens) → ``reasoning_effort``: the largest budget each effort is
#: sent for; larger budgets get "high". Budget 0 is the lowest "off" the model lists
#: ("none" from gpt-5.1 on, "minimal" on gpt-5), sent as the nearest level the model takes.
EFFORT_CEILINGS: tuple[tuple[int, str], ...] = ((2048, "low"), (8192, "medium"))


def effort_for(model: str, budget: int) -> str:
    """The ``reasoning_effort`` a reasoning budget is sent as (see :data:`EFFORT_CEILINGS`),
    among the levels ``model`` takes (:func:`~ctxprobe.providers.openai.responses.efforts_for`)."""
    if budget == 0:
        efforts, _ = efforts_for(model)
        return "none" if "none" in efforts else "minimal" if "minimal" in efforts else nearest_effort(model, "none")
    for ceiling, effort in EFFORT_CEILINGS:
        if budget <= ceiling:
            return nearest_effort(model, effort)
    return nearest_effort(model, "high")


def is_reasoning_model(model: str) -> bool:
    """OpenAI reasoning families (they take max_completion_tokens and no temperature): the
    ones :data:`~ctxprobe.providers.openai.responses.EFFORT_TABLE` lists effort levels for
    (o-series, gpt-5 and later, gpt-6 …): one table for routing and efforts alike, where
    name prefixes here once missed gpt-6."""
    return has_efforts(model)


def can_stop_reasoning(model: str) -> bool:
    """Whether the model lists an effort that turns reasoning off or nearly (none, minimal)."""
    efforts, _ = efforts_for(model)
    return "none" in efforts or "minimal" in efforts


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
    if (written := cache_write_tokens(usage.get("prompt_tokens_details"))) is not None:
        extra["cache_write_tokens"] = written  # openai 3.60: prompt_tokens_details.cache_write_tokens
    return finalize(
        content or "",
        choice.get("finish_reason"),
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        api_reasoning=reasoning if isinstance(reasoning, str) else None,
        extra=extra,
    )


class OpenAIProvider(SDKProvider):
    """Chat completions through ``openai.AsyncOpenAI`` (one client per event loop)."""

    provider = "openai"
    sdk = ("openai", "openai", "openai")
    options_model = OpenAIOptions
    api_key_env = API_KEY_ENV
    base_url_env = BASE_URL_ENV
    default_host = "api.openai.com"
    example = "gpt-4o-mini"
    #: chat completions: OpenAI chat shape (tool_calls, role tool, tools); the Responses API:
    #: function_call / function_call_output items, a FunctionToolParam (responses.responses_input)
    sends_tool_messages = True
    options: OpenAIOptions

    def __init__(self, model: str, options: OpenAIOptions, *, name: str | None = None,
                 context_window: int | None = None) -> None:
        why = options_refusal(model, options.reasoning_effort, options.api)
        if why:
            raise CtxprobeError(f"bad model spec '{name or PREFIX + model}': {why}")
        super().__init__(model, options, name=name, context_window=context_window)
        self._cache_key = True  # send prompt_cache_key (False once the endpoint refused it)

    async def read_model_facts(self) -> tuple[dict[str, Any], list[str]]:
        """What the installed SDK says of the model (its ``ChatModel``/``ResponsesModel``
        lists and their deprecation note; no request): stored with the run, a past shutdown
        date refused in one line, an announced one warned with its date."""
        import datetime as dt

        facts, retired, warning = sdk_facts(self.model, dt.date.today().isoformat())
        facts["api"] = "responses" if self.responses else "chat completions"
        if retired and self.base_url is None:  # OpenAI's own host: a proxy may still serve the name
            raise CtxprobeError(retired)
        return facts, [warning] if warning else []

    def _make_client(self) -> Any:
        return self._sdk.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                                     timeout=self.options.timeout)

    @property
    def reasons(self) -> bool:
        """Whether the model takes the reasoning request shape (named, or forced by option)."""
        if self.options.reasoning is not None:
            return self.options.reasoning
        return is_reasoning_model(self.model) or self.options.reasoning_effort is not None

    @property
    def responses(self) -> bool:
        """Whether requests go through the Responses API (reasoning models, unless ``?api=chat``)."""
        api = getattr(self.options, "api", None)
        return api == "responses" or (api is None and (self.reasons or is_pro(self.model))) or responses_only(self.model)

    def sampling_refusal(self, temperature: float, top_p: float | None, thinking: bool = False) -> str | None:
        """A reasoning model is sent no temperature or top_p (:meth:`request_body`): a
        decoding (the sweep's, or a variant's) would not reach it."""
        if not self.reasons:
            return None
        asks = f"temperature {temperature:g}" + ("" if top_p is None else f" and top_p {top_p:g}")
        return (f"{self.name} is sent the reasoning request shape, without temperature or top_p, so {asks} "
                "would not be sent: drop it")

    def reasoning_refusal(self, budget: int) -> str | None:
        if not self.reasons:
            return None if budget == 0 else (
                f"{self.name} is not a reasoning model, so a reasoning budget of {budget:,} tokens would change "
                "nothing: give --reasoning-budgets 0 (or add ?reasoning=true to the model if it does reason)")
        if budget == 0 and not can_stop_reasoning(self.model):
            efforts, source = efforts_for(self.model)
            return (f"{self.name} cannot turn reasoning off (its lowest effort is '{efforts[0]}'; "
                    f"{source.split(';')[0]}): start --reasoning-budgets above 0")
        return None

    def request_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The keyword arguments of ``responses.create`` (:attr:`responses`) or
        ``chat.completions.create`` for one request."""
        reasoning = self.reasons
        budget = request.reasoning_budget if request.reasoning_budget is not None else (self.options.thinking or 0)
        if self.responses:
            effort: str | None = self.options.reasoning_effort
            if effort is None and request.reasoning_budget is not None:
                effort = effort_for(self.model, request.reasoning_budget)
            elif effort is None and is_pro(self.model):
                effort = efforts_for(self.model)[0][0]  # said, not left to a default the model may not take
            return responses_body(self.model, request, effort=effort, budget=budget, cache_key=self._cache_key)
        # no prefill in OpenAI's API: an answer prefix joins the user turn (as RULER's client sends it)
        body: dict[str, Any] = {"model": self.model, "messages": fold_prefill(list(request.messages))}
        if (tools := declared_tools(request.messages)) is not None:
            body["tools"] = tools  # a tools layout's conversation: the tool its calls name, declared
        if reasoning:
            body["max_completion_tokens"] = request.max_tokens + budget
            if self.options.reasoning_effort is not None:
                body["reasoning_effort"] = self.options.reasoning_effort
            elif request.reasoning_budget is not None:  # among the levels the model takes (pro: high only)
                body["reasoning_effort"] = effort_for(self.model, request.reasoning_budget)
            elif is_pro(self.model):
                body["reasoning_effort"] = efforts_for(self.model)[0][0]  # said, not left to a default
        else:
            body["max_tokens"] = request.max_tokens + budget
            body["temperature"] = request.temperature
            if request.top_p is not None:
                body["top_p"] = request.top_p
        if request.seed is not None:
            body["seed"] = request.seed
        if request.cache is not None and self._cache_key:
            # caching is automatic; the key routes a group's requests to where its prefix is cached
            body["prompt_cache_key"] = request.cache.key
        return body

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        client = self._client_for_loop()
        secrets = (self._api_key,)
        try:
            async with self._gate.enter(request.cache):
                body = self.request_body(request)
                create = client.responses.create if self.responses else client.chat.completions.create
                response = await create(**body)
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
        return parse_response(data) if self.responses else parse_chat_completion(data)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except RuntimeError:  # its loop is gone; the sockets went with it
                pass


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def make_provider(ref: ModelRef, *, options: dict[str, object] | None = None, **_: Any) -> OpenAIProvider:
    """The factory the declaration names (``factory(ref, *, tokenizer, n_ctx, options)``): the
    provider of the parsed reference, its name and options as parsed."""
    return OpenAIProvider.from_ref(ref, dict(options or {}))
