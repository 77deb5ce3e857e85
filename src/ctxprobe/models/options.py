"""Per-provider options, given in the model spec string or as a mapping from the spec file.

Options ride on the model spec as a query string, so one string names everything that
changes a model's answers and a sweep is reproducible from it alone::

    openai:gpt-4o-mini?reasoning_effort=low
    anthropic:claude-sonnet-4-5?thinking=2048
    gemini:gemini-2.5-flash?thinking=0
    hf:/models/qwen3-0.6b?dtype=bfloat16&thinking=512

Each provider validates its options with a pydantic model (``extra="forbid"``, as simonw/llm
does), so a typo is a one-line error listing the accepted names instead of a silently
ignored setting. Values arrive as strings and are coerced by pydantic's lax mode
(``"2048"`` → 2048, ``"true"`` → True).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import as_ref

T = TypeVar("T", bound="ProviderOptions")


class ProviderOptions(BaseModel):
    """Options every API provider shares; subclasses add their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Token budget for reasoning, *on top of* the answer's ``max_tokens``: a thinking
    #: model must not eat the answer budget, or a wrong-looking empty answer is really a
    #: budget set too low. ``None``: the provider's default (no explicit thinking).
    thinking: int | None = Field(default=None, ge=0)
    #: Seconds the SDK waits for one response (the runner's own timeout still applies).
    timeout: float = Field(default=600.0, gt=0)
    #: Another endpoint for the same API (a proxy, a gateway); env vars are read otherwise.
    base_url: str | None = None


class OpenAIOptions(ProviderOptions):
    #: openai-python's ``ReasoningEffort`` values; which a model takes: :mod:`ctxprobe.models.openai_responses`
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None
    #: ``responses`` (the default for reasoning models; the only one for pro models) or ``chat``
    #: (chat completions, the default for the others)
    api: Literal["responses", "chat"] | None = None
    #: Force (True) or forbid (False) the reasoning-model request shape (no temperature,
    #: ``max_completion_tokens``); ``None`` guesses from the model name (o1/o3/o4/gpt-5).
    reasoning: bool | None = None


class AnthropicOptions(ProviderOptions):
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    #: ``thinking: {"type": "adaptive"}`` (the model decides how much to think), on the models
    #: that take it (Claude 4.6 and later; the only thinking Opus 4.7 and later take)
    adaptive: bool | None = None
    #: Prompt-cache lifetime of the breakpoints: 5 minutes (the API's default, refreshed
    #: on use) or 1h (writes cost 2× input instead of 1.25×).
    cache_ttl: Literal["5m", "1h"] | None = None
    #: The 1M-token window beta of Claude Sonnet 4 / 4.5 (``context-1m-2025-08-07``), retired
    #: on 2026-04-30 (genai-prices 0.2.3's note on claude-sonnet-4-5, from Anthropic's release
    #: notes): named only to refuse it in one line; the 1M window of newer models needs no option.
    context_1m: bool | None = None

    @field_validator("context_1m")
    @classmethod
    def _retired_beta(cls, value: bool | None) -> bool | None:
        if value:
            raise ValueError("the 1M-window beta (context-1m) was retired on 2026-04-30 and requests over 200K "
                             "tokens fail; drop ?context_1m (Opus 4.6+ and Sonnet 4.6+ have a 1M window without it)")
        return value


class GeminiOptions(ProviderOptions):
    pass


class HFModelOptions(BaseModel):
    """Options of an in-process transformers model (``hf:/path``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thinking: int | None = Field(default=None, ge=0)
    dtype: Literal["float32", "bfloat16", "float16", "auto"] = "float32"
    #: Passed to the chat template (Qwen3-style ``enable_thinking``) when set.
    enable_thinking: bool | None = None
    threads: int | None = Field(default=None, ge=1)


def split_options(spec: str) -> tuple[str, dict[str, str]]:
    """``provider:name?k=v&k2=v2`` → (``provider:name``, ``{k: v, k2: v2}``): the options the
    model parser cut (:class:`ctxprobe.spec.names.ModelRef`), checked here (none given twice,
    each ``name=value``)."""
    ref = as_ref(spec)
    base, query = ref.located, ref.query
    if not query:
        return base, {}
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    options: dict[str, str] = {}
    for key, value in pairs:
        if key in options:
            raise CtxprobeError(f"bad model spec '{spec}': option '{key}' given twice")
        options[key] = value
    if not pairs and query:
        raise CtxprobeError(f"bad model spec '{spec}': options must look like ?name=value&name2=value2")
    return base, options


def parse_options(
    cls: type[T] | type[HFModelOptions],
    spec: str,
    query: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> Any:
    """Validate options (spec-file mapping overridden by the spec string) into ``cls``.

    Errors are one line: which option, what is wrong, which names are accepted."""
    merged = {**dict(extra or {}), **dict(query)}
    try:
        return cls(**merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first.get("loc", ())) or "?"
        accepted = ", ".join(cls.model_fields)
        if first.get("type") == "extra_forbidden":
            why = f"unknown option '{name}'"
        else:
            why = f"option '{name}': {first.get('msg', 'invalid value')}"
        raise CtxprobeError(f"bad model spec '{spec}': {why} (accepted: {accepted})") from None


def _check(cls: type[ProviderOptions]) -> Any:
    def check(ref: Any) -> None:
        """The provider's options checked from the name alone (no SDK, no key): ``plan`` refuses
        what ``run`` would, in the same one line."""
        parse_options(cls, ref.raw or ref.spec, ref.options)

    return check


def check_openai(ref: Any) -> None:
    """OpenAI's options, then the effort levels and API the model takes."""
    from ctxprobe.models.openai_responses import options_refusal

    options = parse_options(OpenAIOptions, ref.raw or ref.spec, ref.options)
    why = options_refusal(ref.name, options.reasoning_effort, options.api)
    if why:
        raise CtxprobeError(f"bad model spec '{ref.raw or ref.spec}': {why}")


def check_anthropic(ref: Any) -> None:
    """Anthropic's options, then what the model's family takes (effort levels, adaptive thinking)."""
    from ctxprobe.models.claude_rules import options_refusal

    options = parse_options(AnthropicOptions, ref.raw or ref.spec, ref.options)
    why = options_refusal(ref.name, options.effort, options.adaptive)
    if why:
        raise CtxprobeError(f"bad model spec '{ref.raw or ref.spec}': {why}")



check_gemini = _check(GeminiOptions)
