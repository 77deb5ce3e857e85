"""What ctxprobe knows about each provider, in one place: a :class:`ProviderInfo` given at
``register("providers", NAME, factory, info=...)`` (or an attribute ``provider_info`` of a
plugin's factory), read by every chain that needs it — the default tokenizer, remote
counting, the batch API, prices, caching rules, windows, bare-name hints and CLI help.

Types and look-ups only; the built-in providers' data is in :mod:`ctxprobe.core.profiles`.
Nothing here imports a provider or an SDK.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import quote

from ctxprobe.errors import CtxprobeError

#: A price table older than this many days is stale (``plan`` warns, ``prices --check`` fails).
STALE_DAYS = 90

Mechanism = Literal["breakpoints", "automatic", "explicit", "none"]


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens, for prompts of more than ``above`` tokens (one tier)."""

    input: float  # USD per 1M input tokens
    output: float  # USD per 1M output tokens
    cached_input: float | None = None  # USD per 1M prompt tokens read from the prompt cache
    cache_write: float | None = None  # USD per 1M prompt tokens written to it (5-minute TTL)
    cache_write_1h: float | None = None  # the same with Anthropic's 1-hour TTL
    cache_storage: float | None = None  # USD per 1M cached tokens per hour (Gemini explicit caches)
    batch: float | None = None  # the batch API's factor on every price (0.5: half)
    above: int = 0  # this tier bills prompts of more than this many tokens (0: the base tier)

    def cost(self, input_tokens: int, output_tokens: int, *, cached: int = 0, written: int = 0) -> float:
        """USD for one response: ``input_tokens`` is every prompt token, of which ``cached``
        were read from the prompt cache and ``written`` were written to it."""
        cached = max(0, min(cached, input_tokens))
        written = max(0, min(written, input_tokens - cached))
        plain = input_tokens - cached - written
        read_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        return (plain * self.input + cached * read_price + written * write_price + output_tokens * self.output) / 1e6

    def as_batch(self) -> Price | None:
        """Every price at the batch factor; None when the provider has no batch API."""
        if self.batch is None:
            return None
        f = self.batch

        def scaled(v: float | None) -> float | None:
            return None if v is None else v * f

        return replace(self, input=self.input * f, output=self.output * f, cached_input=scaled(self.cached_input),
                       cache_write=scaled(self.cache_write), cache_write_1h=scaled(self.cache_write_1h),
                       cache_storage=scaled(self.cache_storage))


@dataclass(frozen=True)
class CacheRules:
    mechanism: Mechanism
    min_tokens: int = 1024  # shorter prefixes are never cached
    increment: int = 1  # cached reads come in steps of this many tokens past min_tokens
    max_breakpoints: int = 4
    ttl_s: float = 300.0  # 5 minutes (Anthropic's default, refreshed on use; our explicit caches' TTL)


NO_CACHE = CacheRules("none")


@dataclass(frozen=True)
class ModelInfo:
    """One model of a provider: its price tiers, window, and where they were read."""

    name: str  # as the provider names it (``gpt-4.1``), without ``provider:``
    prices: tuple[Price, ...] = ()  # tiers, ``above`` ascending, the first one's 0
    window: int | None = None  # prompt + output tokens the model takes
    long_window: int | None = None  # with the long-context option (``long_option``)
    long_option: str = ""  # the model option that asks for it, e.g. ``context_1m=true``
    as_of: str = ""  # ISO date the entry was read
    source: str = ""  # the page it was read from, and what could not be verified
    retired: str = ""  # non-empty: the model is gone; plan and run refuse it with this note
    deprecated: str = ""  # non-empty: still served, said by plan; ``prices --check`` lists it
    aliases: tuple[str, ...] = ()

    def price_at(self, prompt_tokens: int | None = None) -> Price | None:
        """The tier billing a request of ``prompt_tokens`` prompt tokens (the base tier when None)."""
        if not self.prices:
            return None
        if prompt_tokens is None:
            return self.prices[0]
        tier = self.prices[0]
        for price in self.prices[1:]:
            if prompt_tokens > price.above:
                tier = price
        return tier

    def window_for(self, options: dict[str, str]) -> int | None:
        key, _, value = self.long_option.partition("=")
        if self.long_window and key and options.get(key, "").lower() in (value.lower(), "1", "true"):
            return self.long_window
        return self.window


@dataclass(frozen=True)
class ProviderInfo:
    """What ctxprobe needs to know about a provider, declared once at its registration.

    ``default_tokenizer`` and ``remote_counter`` are templates with ``{name}`` (the model),
    ``{base_url}`` and ``{name_quoted}``; ``tokenizer_by_prefix`` picks one by the model
    name's prefix first (longest listed first). ``batch`` is the ``"module:Class"`` of its
    batch API, constructed with the provider. ``caching`` maps a regex on the model name to
    its rules (first match wins). ``free``: local or simulated, costs nothing."""

    default_tokenizer: str | None = None
    tokenizer_by_prefix: tuple[tuple[str, str], ...] = ()
    remote_counter: str | None = None
    batch: str | Callable[..., Any] | None = None
    caching: tuple[tuple[str, CacheRules], ...] = ()
    explicit_caching: bool = False  # caches can be asked for explicitly (--cache-prompt explicit)
    reasoning: str = ""  # the reasoning controls, as a model option: ``?thinking=N``
    models: tuple[ModelInfo, ...] = ()
    free: bool = False
    bare_hints: tuple[str, ...] = ()  # bare model names starting so belong to this provider
    help: str = ""  # how the model is named, for the CLI's --model help
    sources: tuple[str, ...] = field(default=())  # the provider's pricing / caching / batch pages

    def tokenizer_for(self, name: str, base_url: str | None) -> str | None:
        lowered = name.lower().split("/")[-1]
        for prefix, tokenizer in self.tokenizer_by_prefix:
            if lowered.startswith(prefix):
                return tokenizer
        return _fill(self.default_tokenizer, name, base_url)


def _fill(template: str | None, name: str, base_url: str | None) -> str | None:
    if template is None:
        return None
    return template.format(name=name, base_url=base_url or "", name_quoted=quote(name, safe=""))


EMPTY = ProviderInfo()


def provider_info(provider: str) -> ProviderInfo:
    """The profile a provider was registered with (an empty one when it declared none)."""
    from ctxprobe.core import registry

    entry = registry.find("providers", provider)
    if entry is None:
        return EMPTY
    info = entry.meta.get("info")
    if isinstance(info, str):  # "module:attr", imported on first use
        from ctxprobe.core.loader import load_path

        info = load_path(info, what=f"provider '{provider}': its profile")
    if info is None and entry.origin != "ctxprobe":
        factory = entry.load()
        info = getattr(factory, "provider_info", None)
        if info is None and isinstance(getattr(factory, "default_tokenizer", None), str):
            info = ProviderInfo(default_tokenizer=factory.default_tokenizer)  # the older plugin form
    return info if isinstance(info, ProviderInfo) else EMPTY


def split_model(model: str) -> tuple[str, str, dict[str, str]]:
    """``provider:name?k=v`` (canonical) → (provider, name without a served URL, options)."""
    from urllib.parse import parse_qsl

    body, _, query = model.strip().partition("?")
    provider, sep, name = body.partition(":")
    if not sep:
        return body, "", {}
    name = name.split("@http", 1)[0]
    return provider, name, dict(parse_qsl(query, keep_blank_values=True))


def builtin_models() -> dict[str, ModelInfo]:
    """Every registered provider's models, as ``provider:name`` (aliases included)."""
    from ctxprobe.core import registry

    table: dict[str, ModelInfo] = {}
    for entry in registry.entries("providers"):
        for info in provider_info(entry.name).models:
            for name in (info.name, *info.aliases):
                table[f"{entry.name}:{name}"] = info
    return table


def model_info(model: str, table: Mapping[str, object] | None = None) -> ModelInfo | None:
    """What the catalog (or ``table``, a price table) knows of ``model``; None: nothing."""
    provider, name, _ = split_model(model)
    key = f"{provider}:{name}" if name else provider
    found = (table if table is not None else builtin_models()).get(key)
    return found if isinstance(found, ModelInfo) else None


def context_window(model: str, table: Mapping[str, object] | None = None) -> int | None:
    """The model's window in tokens (prompt and output) as the catalog knows it, the
    long-context option (``?context_1m=true`` on Claude Sonnet 4/4.5) included; None: unknown."""
    info = model_info(model, table)
    return info.window_for(split_model(model)[2]) if info is not None else None


def check_model(model: str, table: Mapping[str, object] | None = None) -> str | None:
    """Refuse a retired model in one line; a deprecated one's note (None: nothing to say)."""
    info = model_info(model, table)
    if info is None:
        return None
    if info.retired:
        raise CtxprobeError(f"{model} is retired: {info.retired}")
    return f"{model} is deprecated: {info.deprecated}" if info.deprecated else None


def age_days(as_of: str, today: _dt.date | None = None) -> int | None:
    try:
        day = _dt.date.fromisoformat(as_of)
    except ValueError:
        return None
    return ((today or _dt.date.today()) - day).days


def age_note(as_of: str, today: _dt.date | None = None) -> str | None:
    """A warning when prices read on ``as_of`` are older than :data:`STALE_DAYS` days."""
    days = age_days(as_of, today)
    if days is None or days <= STALE_DAYS:
        return None
    return (f"prices read on {as_of} are {days} days old (over {STALE_DAYS}): check the provider's page "
            "or give current ones in a price file (--prices FILE)")


def model_help() -> str:
    """How models are named, one spelling per registered provider (the CLI's --model help)."""
    from ctxprobe.core import registry

    forms = [provider_info(e.name).help or f"{e.name}/MODEL" for e in registry.entries("providers")]
    return " | ".join(forms) + " (provider:name works too, e.g. openai:gpt-4o)"
