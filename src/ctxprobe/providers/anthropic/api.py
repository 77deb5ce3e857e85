"""``anthropic:MODEL[?thinking=N]``: Claude through the official ``anthropic`` SDK.

Key from ``ANTHROPIC_API_KEY``; endpoint from the ``base_url`` option, else
``ANTHROPIC_BASE_URL``, else the SDK default. SDK retries are off (``max_retries=0``):
the runner retries; errors are classified like the OpenAI provider's (the two SDKs share
their exception hierarchy), and 529 "overloaded" is transient like any 5xx.

The Messages API takes the system prompt as a separate ``system`` parameter, so system
messages are lifted out of the list. What each model takes (thinking shapes, how thinking
is turned off, effort levels) comes from Anthropic's Models API (``models.retrieve``'s
``capabilities``, read once per run by :meth:`AnthropicProvider.read_model_facts` and
stored with the run), else :mod:`ctxprobe.providers.anthropic.rules`' table (offline). A model the
API calls ``retired`` is refused in one line; a ``deprecated`` one is warned with its
``retires_at`` date.

Every body holds only what the installed SDK's ``MessageCreateParams`` names; nothing rides
in ``extra_body``. Sampling: the anthropic SDK from 2.0 sends ``anthropic-version:
2026-10-21``, under which ``temperature``/``top_p``/``top_k`` are a 400 (the SDK's types no
longer name them), so no sampling field is sent and decoding is the provider's default
(:func:`~ctxprobe.providers.anthropic.rules.sampling_note`); a decoding that needs one is refused
in one line. With an SDK whose ``MessageCreateParams`` still names them, one of
``temperature``/``top_p`` is sent, never both (:func:`sampling`), to the models that take them.

Extended thinking (``?thinking=N``, N ≥ 1024 per the API) is sent as ``thinking={"type":
"enabled", "budget_tokens": N}`` with ``max_tokens = answer budget + N`` where the model
takes that; ``?adaptive=true`` sends ``thinking={"type": "adaptive"}`` (Claude 4.6 and
later), the only shape Opus 4.7 and later take: there a budget N (``?thinking=N`` or the
sweep's axis) is sent as adaptive thinking with ``max_tokens = answer budget + N``.
``?effort=`` is sent as ``output_config.effort`` where the model lists that level.
``thinking`` blocks come back apart from ``text`` blocks and are stored as reasoning; the
thinking tokens billed (``usage.output_tokens_details.thinking_tokens``, anthropic 2.17) are
stored as the reply's reasoning tokens whether or not the text was shown (Claude 5 omits it
by default), so a reply whose thinking used the cap reads as ``output_truncated`` with its
count.

A reasoning budget from the sweep's grid (``GenerateRequest.reasoning_budget``) replaces
``?thinking``: N ≥ 1024 as above; 0 as the model's "off" (``{"type": "disabled"}`` where
listed, thinking left out where the model thinks only when asked) and refused before
anything is sent where the model cannot stop thinking (Claude Fable); 1–1023 is refused on
a model that takes ``enabled``.
"""

from __future__ import annotations

from typing import Any

from ctxprobe.core.tools import anthropic_tools, anthropic_turns
from ctxprobe.errors import CtxprobeError
from ctxprobe.models._sdk import classify_stainless_error, one_line
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, cached_prompt_tokens
from ctxprobe.models.caching import PrefixGate
from ctxprobe.providers.anthropic.caching import anthropic_blocks
from ctxprobe.providers.anthropic.rules import (
    ClaudeRules,
    claude_rules,
    options_refusal,
    reasoning_note,
    rules_from_api,
    sampling_note,
    sampling_settable,
)
from ctxprobe.providers.anthropic.options import AnthropicOptions
from ctxprobe.models.reasoning import finalize
from ctxprobe.models.sdk_provider import SDKProvider
from ctxprobe.spec.names import ModelRef
from ctxprobe.plan.caching import cache_rules
from ctxprobe.tokenizers.base import Message, fold_prefill

PREFIX = "anthropic:"
API_KEY_ENV: tuple[str, ...] = ("ANTHROPIC_API_KEY",)
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
MIN_THINKING = 1024

#: Anthropic stop reasons in the OpenAI vocabulary the scoring layer reads.
STOP_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    # the prompt plus output reached the window: the output was cut, like max_tokens
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "tool_use": "tool_calls",
    "pause_turn": "pause_turn",
}


def split_system(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """System messages → the ``system`` parameter; the rest stay in order, a tools layout's
    conversation in Anthropic's blocks (:func:`ctxprobe.core.tools.anthropic_turns`)."""
    return anthropic_turns(messages)


def takes_sampling(model: str) -> bool:
    """Whether ``temperature``/``top_p`` may be sent to the model: the installed SDK's
    request type names them (not under ``anthropic-version: 2026-10-21``) and the model's
    family takes them (:mod:`ctxprobe.providers.anthropic.rules`: Opus 4.7 removed them, as did
    the models after it; a family the table does not name gets the newest rules: none)."""
    return sampling_settable() and claude_rules(model).sampling


def sampling(model: str, temperature: float, top_p: float | None) -> dict[str, float]:
    """The sampling fields one request carries: never both ``temperature`` and ``top_p``
    (Claude Sonnet 4.5 and later answer 400 to both; Anthropic's docs advise altering one).
    ``top_p`` alone when it is set and the temperature is ctxprobe's default (0); the
    temperature otherwise; nothing for a model that takes no sampling parameters."""
    if not takes_sampling(model):
        return {}
    if top_p is not None and temperature == 0:
        return {"top_p": top_p}
    return {"temperature": temperature}


def parse_message(data: dict[str, Any]) -> GenerateResult:
    """A Messages API response (as a dict) → GenerateResult with thinking kept apart."""
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise PermanentError("malformed response from anthropic: no content list")
    text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    thinking = "\n".join(b.get("thinking", "") for b in blocks
                         if isinstance(b, dict) and b.get("type") == "thinking" and b.get("thinking"))
    usage = u if isinstance(u := data.get("usage"), dict) else {}
    # Cached prompt tokens are still prompt tokens: all three add up to what the model read.
    parts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    ints = [p for p in parts if isinstance(p, int)]
    prompt_tokens = sum(ints) if ints else None
    extra: dict[str, object] = {k: data[k] for k in ("id", "model") if data.get(k)}
    if any(isinstance(b, dict) and b.get("type") == "redacted_thinking" for b in blocks):
        extra["reasoning_redacted"] = True
    if (cached := cached_prompt_tokens(data)) is not None:
        extra["cached_prompt_tokens"] = cached
    if isinstance(written := usage.get("cache_creation_input_tokens"), int):
        extra["cache_write_tokens"] = written
    details = d if isinstance(d := usage.get("output_tokens_details"), dict) else {}
    if isinstance(thought := details.get("thinking_tokens"), int) and not isinstance(thought, bool):
        extra["reasoning_tokens"] = thought  # billed thinking, shown or not (Claude 5 omits the text)
    stop = data.get("stop_reason")
    return finalize(
        text,
        STOP_REASONS.get(stop, stop) if isinstance(stop, str) else None,
        prompt_tokens=prompt_tokens,
        completion_tokens=usage.get("output_tokens") if isinstance(usage.get("output_tokens"), int) else None,
        api_reasoning=thinking or None,
        extra=extra,
    )


class AnthropicProvider(SDKProvider):
    """Messages through ``anthropic.AsyncAnthropic`` (one client per event loop)."""

    provider = "anthropic"
    sdk = ("anthropic", "anthropic", "anthropic")
    options_model = AnthropicOptions
    api_key_env = API_KEY_ENV
    base_url_env = BASE_URL_ENV
    default_host = "api.anthropic.com"
    example = "claude-sonnet-4-5"
    options: AnthropicOptions
    #: A tools layout's conversation as tool_use/tool_result blocks, its tool declared (split_system).
    sends_tool_messages = True

    def __init__(self, model: str, options: AnthropicOptions, *, name: str | None = None,
                 context_window: int | None = None) -> None:
        if options.thinking is not None and 0 < options.thinking < MIN_THINKING:
            raise CtxprobeError(
                f"bad model spec '{name or PREFIX + model}': thinking budget must be 0 (off) or ≥ {MIN_THINKING} tokens"
            )
        why = options_refusal(model, options.effort, options.adaptive)
        if why:
            raise CtxprobeError(f"bad model spec '{name or PREFIX + model}': {why}")
        super().__init__(model, options, name=name, context_window=context_window)
        #: What Anthropic's Models API stated of the model (:meth:`read_model_facts`), once read.
        self.facts: dict[str, Any] | None = None
        self._api_rules: ClaudeRules | None = None
        self.cache_rules = cache_rules(self.name)
        self._gate = PrefixGate(self.cache_rules.ttl_s if options.cache_ttl != "1h" else 3600.0)

    def _make_client(self) -> Any:
        kwargs: dict[str, Any] = {"api_key": self._api_key, "max_retries": 0, "timeout": self.options.timeout}
        if self.base_url:
            kwargs["base_url"] = self.base_url
        return self._sdk.AsyncAnthropic(**kwargs)

    def sampling_refusal(self, temperature: float, top_p: float | None, thinking: bool = False) -> str | None:
        """A decoding (the sweep's, or a variant's) this model would not be sent as asked
        (:func:`sampling`)."""
        asks = f"temperature {temperature:g}" + ("" if top_p is None else f" and top_p {top_p:g}")
        if not sampling_settable():
            return f"{self.name}: {sampling_note()}, so {asks} cannot be sent: drop it"
        if not takes_sampling(self.model):
            return (f"{self.name} takes no temperature or top_p (any but the default is refused), so {asks} "
                    "would not be sent: drop it")
        if self.options.thinking or getattr(self.options, "adaptive", None) or thinking:
            return (f"{self.name} thinks (?thinking or a reasoning budget above 0), and thinking takes the default "
                    f"sampling: {asks} would not be sent; drop the thinking or the decoding")
        if top_p is not None and temperature != 0:
            return (f"{self.name} is sent temperature or top_p, never both (Anthropic refuses both), and {asks} "
                    "were asked: give one of them (top_p with temperature=0)")
        return None

    def decoding_note(self) -> str | None:
        """Said by the run header, stored with the run and shown by the report where the API
        takes no decoding settings (:func:`~ctxprobe.providers.anthropic.rules.sampling_note`)."""
        return sampling_note()

    @property
    def rules(self) -> ClaudeRules:
        """What the model takes: the Models API's word once read (:meth:`read_model_facts`),
        else the table's (:mod:`ctxprobe.providers.anthropic.rules`)."""
        return self._api_rules or claude_rules(self.model)

    async def read_model_facts(self) -> tuple[dict[str, Any], list[str]]:
        """Anthropic's Models API on the model (``models.retrieve``), read once per run:
        (the facts stored with the run, warnings). ``capabilities`` become the rules
        requests follow; a ``retired`` model is refused in one line; a ``deprecated`` one
        is warned with its ``retires_at`` date."""
        if self.facts is not None:
            return self.facts, []
        import datetime as dt

        client = self._client_for_loop()
        try:
            info = await client.models.retrieve(self.model)
        except Exception as exc:
            mapped = classify_stainless_error(exc, self._sdk, self._where, (self._api_key,))
            if mapped is None:
                raise
            raise mapped from None
        data = info.model_dump(mode="json")
        read = dt.date.today().isoformat()
        self._api_rules = rules_from_api(self.model, data, read)
        rules = self.rules
        self.facts = {"source": rules.source, "lifecycle": data.get("lifecycle"),
                      "retires_at": data.get("retires_at"), "max_input_tokens": data.get("max_input_tokens"),
                      "thinking": rules.thinking, "thinking_off": rules.off, "efforts": list(rules.efforts)}
        when = str(data.get("retires_at") or data.get("deprecated_at") or "")[:10]
        if data.get("lifecycle") == "retired":
            raise CtxprobeError(f"{self.name} is retired (Anthropic's Models API says lifecycle: retired"
                                f"{', since ' + when if when else ''}): requests naming it fail; choose a current model")
        why = options_refusal(self.model, self.options.effort, self.options.adaptive, rules)
        if why:
            raise CtxprobeError(f"bad model spec '{self.name}': {why}")
        warnings = []
        if data.get("lifecycle") == "deprecated":
            warnings.append(f"{self.name} is deprecated (Anthropic's Models API), "
                            + (f"retiring {when}" if when else "no retirement date given") + ": plan a move to a newer model")
        return self.facts, warnings

    async def advertised_window(self) -> int | None:
        """The input limit Anthropic's Models API states (``models.retrieve``: ``max_input_tokens``),
        read when neither the library nor a price file gives a window (once per run)."""
        facts, _ = await self.read_model_facts()
        limit = facts.get("max_input_tokens")
        return limit if isinstance(limit, int) and limit > 0 else None

    def reasoning_axis_note(self) -> str | None:
        """How a reasoning-budget axis is sent to this model, where not as asked (adaptive-only)."""
        return reasoning_note(self.model, self.rules)

    def reasoning_refusal(self, budget: int) -> str | None:
        rules = self.rules
        if budget > 0 and rules.thinking == "none":
            return (f"{self.name} does not think ({rules.cited}), so a reasoning budget of {budget:,} tokens would "
                    "change nothing: give --reasoning-budgets 0 or drop the flag")
        if budget == 0 and rules.off == "never":
            return (f"{self.name} cannot turn thinking off ({rules.cited}: no thinking {{type: disabled}}, and "
                    "thinking left out is adaptive), so budget 0 cannot be sent: start --reasoning-budgets above 0")
        if 0 < budget < MIN_THINKING and not rules.adaptive_only:  # adaptive: the budget only caps max_tokens
            return (f"{self.name}: a reasoning budget of {budget:,} tokens is below Anthropic's minimum thinking "
                    f"budget of {MIN_THINKING:,}: use 0 (thinking off) or at least {MIN_THINKING // 1024}k")
        return None

    def request_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for one request: only what the
        installed SDK's ``MessageCreateParams`` names."""
        # an answer prefix joins the user turn, as for every hosted API (Anthropic's own
        # prefill rejects the trailing space some prefixes end with)
        folded = fold_prefill(request.messages)
        system, messages = split_system(folded)
        tools = anthropic_tools(folded)
        if request.cache is not None and self.cache_rules.mechanism == "breakpoints":
            system, messages = self._cached_blocks(folded, request, tools=tools is not None)
        rules = self.rules
        budget = request.reasoning_budget if request.reasoning_budget is not None else (self.options.thinking or 0)
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "max_tokens": request.max_tokens + budget}
        if system is not None:
            body["system"] = system
        if tools is not None:
            body["tools"] = tools
        adaptive = rules.adaptive_only or bool(getattr(self.options, "adaptive", None))
        if adaptive and (budget or getattr(self.options, "adaptive", None)):
            # adaptive thinking (ThinkingConfigAdaptiveParam): the model decides; a budget only raises max_tokens
            body["thinking"] = {"type": "adaptive"}
        elif budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif request.reasoning_budget == 0 and rules.off == "disabled" and rules.thinking != "none":
            body["thinking"] = {"type": "disabled"}  # the budget axis's 0: said, not left to the model's default
        if "thinking" not in body or body["thinking"]["type"] == "disabled":  # thinking takes the default sampling
            body.update(sampling(self.model, request.temperature, request.top_p))
        if self.options.effort is not None:
            body["output_config"] = {"effort": self.options.effort}
        return body

    def _cached_blocks(self, messages: list[Message], request: GenerateRequest,
                       tools: bool = False) -> tuple[Any, list[dict[str, Any]]]:
        """System and messages with each text cut into blocks at the request's cache
        marks, ``cache_control`` on the largest ones (:func:`anthropic_blocks`). In a tools
        layout's conversation the user turns' texts and each ``tool_result``'s content are
        cut so (a tool result's content takes text blocks): the shared tool results are
        cached as the shared turns are."""
        systems = [i for i, m in enumerate(messages) if m["role"] == "system"]
        if len(systems) > 1:  # joined into one parameter: the marks' offsets no longer hold
            return split_system(messages)
        ttl = self.options.cache_ttl

        def blocks(i: int, content: str) -> Any:
            return anthropic_blocks(content, i, request.cache, self.cache_rules, ttl)

        system = blocks(systems[0], messages[systems[0]]["content"]) if systems else None
        if tools:
            return system, anthropic_turns(messages, text=blocks)[1]
        rest = [{"role": m["role"], "content": blocks(i, m["content"])} for i, m in enumerate(messages)
                if m["role"] != "system"]
        return system, rest

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        client = self._client_for_loop()
        secrets = (self._api_key,)
        try:
            async with self._gate.enter(request.cache if self.cache_rules.mechanism == "breakpoints" else None):
                response = await client.messages.create(**self.request_body(request))
        except Exception as exc:
            mapped = classify_stainless_error(exc, self._sdk, self._where, secrets)
            if mapped is None:
                raise
            raise mapped from None
        try:
            data = response.model_dump(mode="json")
        except Exception as exc:
            raise PermanentError(f"malformed response from {self._where}: {one_line(str(exc), secrets)}") from None
        return parse_message(data)

    async def count_tokens(self, messages: list[Message]) -> int:
        """The API's own count of a prompt (``messages.count_tokens``), system included."""
        client = self._client_for_loop()
        system, rest = split_system(fold_prefill(messages))
        kwargs: dict[str, Any] = {"model": self.model, "messages": rest}
        if system is not None:
            kwargs["system"] = system
        if (tools := anthropic_tools(messages)) is not None:
            kwargs["tools"] = tools  # the declaration is part of the count, as of the request
        try:
            result = await client.messages.count_tokens(**kwargs)
        except Exception as exc:
            mapped = classify_stainless_error(exc, self._sdk, self._where, (self._api_key,))
            if mapped is None:
                raise
            raise mapped from None
        return int(result.input_tokens)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except RuntimeError:
                pass


def make_provider(ref: ModelRef, *, options: dict[str, object] | None = None, **_: Any) -> AnthropicProvider:
    """The factory the declaration names (``factory(ref, *, tokenizer, n_ctx, options)``): the
    provider of the parsed reference, its name and options as parsed."""
    return AnthropicProvider.from_ref(ref, dict(options or {}))
