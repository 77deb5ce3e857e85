"""What ctxprobe knows about each provider, in one place: a :class:`ProviderInfo` given at
``register("providers", NAME, factory, info=...)`` (or an attribute ``provider_info`` of a
plugin's factory), read by every chain that needs it — the default tokenizer, remote
counting, the batch API, prices, caching rules, windows, bare-name hints and CLI help.

Types and look-ups only; the built-in providers' data is in their folders' profiles
(``ctxprobe/providers/<name>/profile.py``; the sims' in :mod:`ctxprobe.core.profiles`).
Nothing here imports a provider or an SDK.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol
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
    #: a price file's batch factor on every price (0.5: half); from genai-prices, its batch
    #: input price over the input price, for display. Read through :func:`batch_price` only.
    batch: float | None = None
    above: int = 0  # this tier bills prompts of more than this many tokens (0: the base tier)
    #: the batch API's own prices for this tier (genai-prices' batch variant), used in place
    #: of the factor: a provider may leave some price (cached input) at its standard rate
    batch_tier: Price | None = None

    def cost(self, input_tokens: int, output_tokens: int, *, cached: int = 0, written: int = 0) -> float:
        """USD for one response: ``input_tokens`` is every prompt token, of which ``cached``
        were read from the prompt cache and ``written`` were written to it."""
        cached = max(0, min(cached, input_tokens))
        written = max(0, min(written, input_tokens - cached))
        plain = input_tokens - cached - written
        read_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        return (plain * self.input + cached * read_price + written * write_price + output_tokens * self.output) / 1e6

    def times(self, factor: float) -> Price:
        """Every price of this tier multiplied by ``factor`` (a batch API's share of on-demand);
        how a batch price is found is :func:`batch_price`'s to say."""

        def scaled(v: float | None) -> float | None:
            return None if v is None else v * factor

        return replace(self, input=self.input * factor, output=self.output * factor,
                       cached_input=scaled(self.cached_input), cache_write=scaled(self.cache_write),
                       cache_write_1h=scaled(self.cache_write_1h), cache_storage=scaled(self.cache_storage),
                       batch=None, batch_tier=None)


@dataclass(frozen=True)
class BatchDiscount:
    """What a provider's batch API bills, as a share of its on-demand prices, and the page
    that says so: ctxprobe's own estimate of a model's batch price, used only where neither
    genai-prices (its ``processing: batch`` variant) nor a price file gives one."""

    factor: float
    source: str  # the provider's page, and when it was read


#: Whose a batch price is: genai-prices' own batch variant, a price file's (or a plugin
#: profile's) ``batch`` factor, ctxprobe's estimate from the provider's batch discount, or
#: none known (the provider has no batch API ctxprobe sends to).
BatchBasis = Literal["library", "price file", "estimate", "unknown"]


@dataclass(frozen=True)
class BatchPrice:
    """One price tier as billed for requests sent through the provider's batch API."""

    price: Price | None  # None: no batch price known
    basis: BatchBasis
    factor: float | None = None  # the share of on-demand (the library's: on the input price)
    source: str = ""  # an estimate's page

    def label(self) -> str:
        """Whose price it is, in a few words: what ``plan`` and ``prices`` print beside it."""
        if self.basis == "library":
            return "genai-prices' batch price"
        if self.basis == "price file":
            return f"the price file's batch factor {self.factor:g}x"
        if self.basis == "estimate":
            return f"ctxprobe's estimate: {self.factor:.0%} of on demand"
        return "no batch API known"

    def described(self) -> str:
        """:meth:`label` with an estimate's reason and page (``plan --json``'s ``batch_source``)."""
        if self.basis == "estimate":
            return f"{self.label()}; genai-prices has no batch price for this model; {self.source}"
        return self.label()


def batch_price(price: Price, provider: str) -> BatchPrice:
    """The one rule for what a request sent in a batch costs, for ``plan``, ``plan --json``,
    ``run --batch --max-cost``, the billed cost, ``prices`` and ``decide`` alike: the
    tier's batch prices from genai-prices where it has them; else a price file's ``batch``
    factor; else, where ``provider`` has a batch API and declares its discount
    (:attr:`ProviderInfo.batch_discount`), every price at that share, labelled as
    ctxprobe's estimate; else unknown."""
    if price.batch_tier is not None:
        return BatchPrice(price.batch_tier, "library", price.batch)
    if price.batch is not None:
        return BatchPrice(price.times(price.batch), "price file", price.batch)
    info = provider_info(provider) if provider else EMPTY
    if info.batch is not None and info.batch_discount is not None:
        d = info.batch_discount
        return BatchPrice(price.times(d.factor), "estimate", d.factor, d.source)
    return BatchPrice(None, "unknown")


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
    library: str = ""  # ``genai-prices X.Y.Z`` when the prices and window are that library's
    library_id: str = ""  # the library's ``provider/model`` the entry was read from
    #: where ``window`` came from when not where the prices did (a price file's window-only entry)
    window_source: str = ""

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
    #: what that batch API bills as a share of on-demand prices, with its page: the batch
    #: price of a model neither genai-prices nor a price file prices in batch (:func:`batch_price`)
    batch_discount: BatchDiscount | None = None
    caching: tuple[tuple[str, CacheRules], ...] = ()
    explicit_caching: bool = False  # caches can be asked for explicitly (--cache-prompt explicit)
    reasoning: str = ""  # the reasoning controls, as a model option: ``?thinking=N``
    #: ctxprobe's own notes on models (retired, aliases): no prices, the library has them
    models: tuple[ModelInfo, ...] = ()
    #: the genai-prices provider id whose prices and windows its models take (""): none
    price_library: str = ""
    #: (regex on the model name, USD per 1M cached tokens per hour, source): an explicit
    #: cache's storage price, which genai-prices does not have (first match wins)
    cache_storage: tuple[tuple[str, float, str], ...] = ()
    #: runs here or on the user's own machines: no list price (a price file may give one; without
    #: one its models have no price known, never $0: :func:`ctxprobe.prices.table.price_for`)
    free: bool = False
    bare_hints: tuple[str, ...] = ()  # bare model names starting so belong to this provider
    #: how the model is named, for the CLI's --model help (a function: read when the help is built)
    help: str | Callable[[], str] = ""
    sources: tuple[str, ...] = field(default=())  # the provider's pricing / caching / batch pages
    #: what ``plan`` says of a sweep of this provider's model: ``"module:function"`` (or the
    #: function) ``notes(spec) -> list[str]``, raising a one-line CtxprobeError for a plan it
    #: cannot send (Claude's thinking rules); None: nothing
    plan_notes: str | Callable[..., list[str]] | None = None

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
    if info is None and entry.origin != "ctxprobe":
        declared = registry.provider_declaration(entry)  # an entry point naming a declaration
        info = declared.info if declared is not None else None
    if isinstance(info, str):  # "module:attr", imported on first use
        from ctxprobe.core.loader import load_path

        info = load_path(info, what=f"provider '{provider}': its profile")
    if info is None and entry.origin != "ctxprobe":
        factory = entry.load()
        info = getattr(factory, "provider_info", None)
        if info is None and isinstance(getattr(factory, "default_tokenizer", None), str):
            info = ProviderInfo(default_tokenizer=factory.default_tokenizer)  # the older plugin form
    return info if isinstance(info, ProviderInfo) else EMPTY


class ModelKey(Protocol):
    """What the catalog reads of a model reference (:class:`ctxprobe.spec.names.ModelRef`,
    parsed where the model entered): the catalog never cuts a model string itself."""

    @property
    def plain(self) -> str: ...  # ``provider:name``, no options, no URL

    @property
    def provider(self) -> str: ...

    @property
    def name(self) -> str: ...  # the model as its provider knows it

    @property
    def bare(self) -> bool: ...  # spelled by the provider's name alone (``local``)

    @property
    def options(self) -> dict[str, str]: ...


def builtin_models() -> dict[str, ModelInfo]:
    """Every registered provider's own model notes, as ``provider:name`` (aliases included);
    the library's models are looked up one at a time (:func:`known_model`)."""
    from ctxprobe.core import registry

    table: dict[str, ModelInfo] = {}
    for entry in registry.entries("providers"):
        for info in provider_info(entry.name).models:
            for name in (info.name, *info.aliases):
                table[f"{entry.name}:{name}"] = info
    return table


def known_model(provider: str, name: str) -> ModelInfo | None:
    """What ctxprobe knows of ``provider:name`` without a price file: genai-prices' prices
    and window (its provider :attr:`ProviderInfo.price_library`), with the provider
    profile's own notes (retired, deprecated) on top; None: nothing known."""
    from ctxprobe.prices.library import library_model

    info = provider_info(provider)
    note = next((m for m in info.models if name in (m.name, *m.aliases)), None)
    entry = library_model(info.price_library, name) if info.price_library else None
    if note is None and entry is not None:
        # a dated id (claude-3-5-sonnet-20241022) is the library's model its note names
        # (claude-3-5-sonnet-latest): the note holds for every name the library reads as it
        note = next((m for m in info.models
                     if (same := library_model(info.price_library, m.name)) is not None
                     and same.library_id == entry.library_id), None)
    found = from_library(entry) if entry is not None and entry.tiers else None
    if found is None:
        return note
    storage = next(((usd, src) for pattern, usd, src in info.cache_storage if re.match(pattern, name)), None)
    if storage is not None:
        tiers = tuple(replace(t, cache_storage=storage[0],
                              batch_tier=t.batch_tier and replace(t.batch_tier, cache_storage=storage[0]))
                      for t in found.prices)
        found = replace(found, prices=tiers, source=f"{found.source}; cache storage ${storage[0]:g}/1M/h: {storage[1]}")
    if note is None:
        return found
    return replace(found, retired=note.retired, deprecated=note.deprecated or found.deprecated,
                   aliases=note.aliases, window=found.window or note.window)


def from_library(entry: Any) -> ModelInfo:
    """A :class:`ctxprobe.prices.library.LibraryModel` as a catalog entry."""
    def price(fields: dict[str, Any]) -> Price:
        batch = fields.get("batch_tier")
        return Price(**{**fields, "batch_tier": price(batch) if batch else None})

    return ModelInfo(entry.name, tuple(price(t) for t in entry.tiers), window=entry.window, as_of=entry.as_of,
                     source=entry.source, deprecated=f"marked deprecated in {entry.library}" if entry.deprecated else "",
                     library=entry.library, library_id=entry.library_id)


def model_info(model: ModelKey, table: Mapping[str, object] | None = None) -> ModelInfo | None:
    """What ``table`` (a price file's entries) knows of ``model``, else the built-in
    knowledge (:func:`known_model`); None: nothing."""
    found = table.get(model.plain) if table is not None else None
    if isinstance(found, ModelInfo) and found.prices:
        return found
    known = known_model(model.provider, model.name) if model.name and not model.bare else None
    if isinstance(found, ModelInfo):  # a window-only entry: its window on the library's prices
        return replace(known, window=found.window, long_window=None, window_source=found.window_source) \
            if known is not None else found
    return known


def context_window(model: ModelKey, table: Mapping[str, object] | None = None) -> int | None:
    """The model's window in tokens (prompt and output) as a price file or the library
    knows it (a price file's long-context option included); None: unknown."""
    info = model_info(model, table)
    return info.window_for(model.options) if info is not None else None


def check_model(model: ModelKey, table: Mapping[str, object] | None = None) -> str | None:
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

    def form(name: str) -> str:
        told = provider_info(name).help
        return (told() if callable(told) else told) or f"{name}/MODEL"

    forms = [form(e.name) for e in registry.entries("providers")]
    return " | ".join(forms) + " (provider:name works too, e.g. openai:gpt-4o)"
