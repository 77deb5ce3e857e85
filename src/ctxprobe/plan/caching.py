"""Prompt caching: each provider's rules, and what a grid costs when its shared prefixes
are read from the cache (the plan's "cached" price, and what the providers are asked for).

A *prefix group* is the cases that share a prompt prefix, in sending order (the depths of
one length and repetition share their filler, sent deepest first; the phone book's
questions about one book share the book). :mod:`ctxprobe.cases.prefixes` measures each
group on the built prompts: each member's tokens, the boundaries (in tokens) up to which
it is byte-identical to another member, and the longest prefix it shares with a member
sent before it. Here that becomes, per request, tokens read from the cache, written to
it, and computed at the plain price, under one provider's rules:

``breakpoints`` (Anthropic)
    The request marks at most ``max_breakpoints`` (4) of its boundaries with
    ``cache_control``: the largest ones. It reads the longest boundary already written
    (the API looks back over earlier block boundaries), and writes from there to its last
    breakpoint. Boundaries below ``min_tokens`` are never cached.
``automatic`` (OpenAI; Gemini 2.5's implicit caching)
    Every prompt's prefix is cached as it is sent; a request reads the longest prefix it
    shares with an earlier one, when at least ``min_tokens``, in steps of ``increment``
    (OpenAI: 1,024 tokens, then 128 at a time), and writes the rest of its own cacheable
    prefix. Writes cost nothing extra where the price has no cache-write price (gpt-4o,
    gpt-5 …, Gemini); gpt-5.6 and gpt-6 bill them at genai-prices' cache-write price (1.25×
    input), reported as ``cache_write_tokens`` (openai 3.60).
``explicit`` (Gemini ``CachedContent``)
    A cache holding the prefix up to a request's largest boundary is created the first
    time a request needs it (billed as input tokens, plus storage for its TTL), used by
    every request of the group with that boundary, and deleted after the group.

TTL: a group's requests are sent together (the plan's order) and a request that shares a
prefix waits for the one that writes it, so a 5-minute cache does not expire in between.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from ctxprobe.core.catalog import NO_CACHE, CacheRules, Mechanism, Price, batch_price, provider_info
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import as_ref

Pricing = Literal["on-demand", "cached", "batch"]
PRICING_MODES: tuple[Pricing, ...] = ("on-demand", "cached", "batch")
__all__ = ["NO_CACHE", "PRICING_MODES", "CacheRules", "Mechanism", "Pricing", "billed_price", "cache_rules",
           "response_cost", "worst_cost"]


def cache_rules(model: str, *, explicit: bool = False) -> CacheRules:
    """The caching rules of ``model`` (``provider:name``), as its provider declares them
    (:attr:`ctxprobe.core.catalog.ProviderInfo.caching`, first matching pattern);
    ``explicit`` asks a provider that has explicit caches (Gemini) for them even where
    implicit caching exists."""
    ref = as_ref(model)
    provider, name = ref.provider, ref.name
    info = provider_info(provider)
    for pattern, rules in info.caching:
        if re.search(pattern, name):
            if explicit and info.explicit_caching and rules.mechanism == "automatic":
                return CacheRules("explicit", rules.min_tokens, ttl_s=rules.ttl_s)
            return rules
    return NO_CACHE


def _explicit_provider(model: str) -> bool:
    return provider_info(as_ref(model).provider).explicit_caching


@dataclass(frozen=True)
class Member:
    """One request of a prefix group, measured on its built prompt."""

    tokens: int  # the whole prompt
    marks: tuple[int, ...] = ()  # shared-prefix boundaries inside it, tokens, ascending
    reads: int = 0  # longest prefix shared with a member sent before it, tokens


@dataclass(frozen=True)
class Billed:
    """One request's prompt tokens by price: read from the cache, written to it, plain."""

    read: int
    written: int
    plain: int
    stored: int = 0  # tokens held in an explicit cache created for it (storage billed for the TTL)

    @property
    def prompt(self) -> int:
        """The request's prompt tokens (an explicit cache's creation is billed on top of them)."""
        return self.read + self.plain + (0 if self.stored else self.written)


def _step(tokens: int, rules: CacheRules) -> int:
    if tokens < rules.min_tokens:
        return 0
    return rules.min_tokens + (tokens - rules.min_tokens) // rules.increment * rules.increment


def bill_group(members: list[Member], rules: CacheRules) -> list[Billed]:
    """Each member's read / written / plain prompt tokens under ``rules``, in sending order."""
    out: list[Billed] = []
    written: set[int] = set()
    for m in members:
        marks = [b for b in m.marks if rules.min_tokens <= b <= m.tokens]
        if rules.mechanism == "breakpoints":
            chosen = marks[-rules.max_breakpoints:]
            read = max((b for b in marks if b in written), default=0)
            top = max(chosen, default=0)
            write = top - read if top > read else 0
            written.update(chosen)
            out.append(Billed(read, write, m.tokens - read - write))
        elif rules.mechanism == "automatic":
            read = _step(min(m.reads, m.tokens), rules)
            # the prompt's own cacheable prefix past what it read is written (billed at the
            # cache-write price where the model has one: gpt-5.6 and gpt-6; else as input)
            write = max(0, _step(m.tokens, rules) - read)
            out.append(Billed(read, write, m.tokens - read - write))
        elif rules.mechanism == "explicit" and marks:
            top = marks[-1]
            created = top not in written
            written.add(top)
            # creating the cache bills its tokens as input (the "write"); the request then reads it
            out.append(Billed(top, top if created else 0, m.tokens - top, stored=top if created else 0))
        else:
            out.append(Billed(0, 0, m.tokens))
    return out


@dataclass
class _Part:
    """The requests of one prompt size: a price tier is chosen per request by its size."""

    prompt: int = 0
    read: int = 0
    written: int = 0
    stored: int = 0
    requests: int = 0


@dataclass
class CachedTotals:
    """Prompt tokens of a whole grid by price, and the cost of each pricing mode."""

    prompt: int = 0
    read: int = 0
    written: int = 0
    stored: int = 0
    output: int = 0
    groups: int = 0
    notes: list[str] = field(default_factory=list)
    #: request prompt tokens → the requests of that size (each billed at its own tier)
    parts: dict[int, _Part] = field(default_factory=dict)

    def add(self, billed: list[Billed], times: int) -> None:
        for b in billed:
            self.prompt += b.prompt * times
            self.read += b.read * times
            self.written += b.written * times
            self.stored += b.stored * times
            part = self.parts.setdefault(b.prompt, _Part())
            part.prompt += b.prompt * times
            part.read += b.read * times
            part.written += b.written * times
            part.stored += b.stored * times
            part.requests += times

    @property
    def read_share(self) -> float:
        return self.read / self.prompt if self.prompt else 0.0

    def cost(self, price: Price | Tiered, mode: Pricing, rules: CacheRules, model: str) -> float | None:
        """USD for the grid in ``mode``; None when no batch price is known
        (:func:`ctxprobe.core.catalog.batch_price`, for ``model``'s provider). With
        tiers (a :class:`ctxprobe.core.catalog.ModelInfo`), each request is billed at the
        tier of its own prompt length; the grid's output tokens are shared out evenly
        over its requests."""
        requests = sum(p.requests for p in self.parts.values())
        if isinstance(price, Price) or not self.parts or not requests:
            base = price if isinstance(price, Price) else price.price_at(None)
            if base is None:
                return None
            whole = _Part(self.prompt, self.read, self.written, self.stored, 1)
            return _part_cost(whole, self.output, base, mode, rules, model)
        total = 0.0
        for size, part in self.parts.items():
            tier = price.price_at(size)
            if tier is None:
                return None
            cost = _part_cost(part, self.output * part.requests / requests, tier, mode, rules, model)
            if cost is None:
                return None
            total += cost
        return total


class Tiered(Protocol):
    def price_at(self, prompt_tokens: int | None = None) -> Price | None: ...


def _part_cost(part: _Part, output: float, price: Price, mode: Pricing, rules: CacheRules, model: str) -> float | None:
    out = round(output)
    if mode == "batch":
        batch = billed_price(price, model, batch=True)
        return None if batch is None else batch.cost(part.prompt, out)
    price = hour_ttl(price, model)
    if mode == "on-demand":
        return price.cost(part.prompt, out)
    cost = price.cost(part.prompt, out, cached=part.read, written=0)
    # a write is billed on top of the read of the same tokens for explicit caches
    # (created, then read), in place of the plain price for Anthropic's breakpoints
    write_price = price.cache_write if price.cache_write is not None else price.input
    if rules.mechanism == "explicit":
        cost += part.written * write_price / 1e6
        if price.cache_storage:
            cost += part.stored * price.cache_storage * rules.ttl_s / 3600 / 1e6
    else:
        cost += part.written * (write_price - price.input) / 1e6
    return cost


def hour_ttl(price: Price, model: str) -> Price:
    """``price`` with its writes at the 1-hour price when the model asks for that TTL
    (``anthropic:…?cache_ttl=1h``)."""
    if as_ref(model).options.get("cache_ttl") == "1h" and price.cache_write_1h is not None:
        batch = price.batch_tier and hour_ttl(price.batch_tier, model)
        return replace(price, cache_write=price.cache_write_1h, batch_tier=batch)
    return price


def billed_price(price: Price, model: str, *, batch: bool = False) -> Price | None:
    """The price a request to ``model`` is billed at: ``price`` (one tier), or for a request
    sent in a batch its batch price by the one rule (:func:`ctxprobe.core.catalog.batch_price`;
    None: none known); writes at the 1-hour price where the model asks for that TTL."""
    billed = batch_price(price, as_ref(model).provider).price if batch else price
    return None if billed is None else hour_ttl(billed, model)


def response_cost(price: Price, model: str, prompt: int, output: int, *, cached: int = 0, written: int = 0,
                  batch: bool = False) -> float:
    """USD for one response from the tokens its provider reported: ``cached`` prompt tokens
    read from the cache, ``written`` written to it. Anthropic's written tokens are part of
    the prompt (billed at the write price instead of the input price); a Gemini explicit
    cache's are a creation billed on top (input price, plus storage for the TTL), the
    request then reading them. ``batch``: at the batch price (an error where none is known:
    :class:`ctxprobe.runner.budget.Ledger` asks :func:`billed_price` first)."""
    p = billed_price(price, model, batch=batch)
    if p is None:
        raise CtxprobeError(f"no batch price is known for {model}")
    if written and _explicit_provider(model):
        storage = (p.cache_storage or 0.0) * cache_rules(model, explicit=True).ttl_s / 3600
        write_price = p.cache_write if p.cache_write is not None else p.input
        return p.cost(prompt, output, cached=cached) + written * (write_price + storage) / 1e6
    return p.cost(prompt, output, cached=cached, written=written)


def worst_cost(price: Price, model: str, prompt: int, output: int, *, batch: bool = False) -> float:
    """The most one response of ``prompt`` tokens can cost: every prompt token at its
    dearest fate (plain, written, or — Gemini's explicit caches — created and read)."""
    if _explicit_provider(model):
        return max(response_cost(price, model, prompt, output, batch=batch),
                   response_cost(price, model, prompt, output, cached=prompt, written=prompt, batch=batch))
    return max(response_cost(price, model, prompt, output, batch=batch),
               response_cost(price, model, prompt, output, written=prompt, batch=batch))
