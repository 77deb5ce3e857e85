"""Prices per million tokens, for plans and ``--max-cost``.

Built-in prices are providers' list prices (USD per 1M tokens) as last read from the
pages in :data:`SOURCES` on the date in :data:`PRICES_AS_OF`; they go stale, so a user
file extends or overrides them: ``~/.config/ctxprobe/prices.yaml`` (or ``--prices FILE``)
with lines such as ``openai:gpt-4o-mini: {input: 0.15, output: 0.60, cached_input: 0.075}``
(optional keys: ``cached_input``, ``cache_write``, ``cache_write_1h``, ``cache_storage``,
``batch``). Local and simulated models cost 0. A model with no known price has cost
``None``: the plan says so and ``--max-cost`` refuses to run it rather than guess.

Four prices besides input and output, each ``None`` where the provider has no such price:

- ``cached_input``: a prompt token read from the provider's prompt cache;
- ``cache_write``: a prompt token written to it (Anthropic 1.25× input for the 5-minute
  cache, ``cache_write_1h`` 2× for the hour; Gemini's explicit caches bill creation at
  the input price);
- ``cache_storage``: a cached token kept for an hour (Gemini's explicit caches);
- ``batch``: the factor a provider's batch API bills at (0.5: half price).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from ctxprobe.errors import CtxprobeError

#: When the built-in prices were read from the providers' pages.
PRICES_AS_OF = "2025-11-15"
#: Where each provider's prices (and caching and batch rules) were read.
SOURCES: dict[str, str] = {
    "openai": "https://platform.openai.com/docs/pricing (caching: https://platform.openai.com/docs/guides/prompt-caching; "
              "batch: https://platform.openai.com/docs/guides/batch)",
    "anthropic": "https://docs.anthropic.com/en/docs/about-claude/pricing (caching: "
                 "https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching; batch: "
                 "https://docs.anthropic.com/en/docs/build-with-claude/batch-processing)",
    "gemini": "https://ai.google.dev/gemini-api/docs/pricing (caching: https://ai.google.dev/gemini-api/docs/caching; "
              "batch: https://ai.google.dev/gemini-api/docs/batch-mode)",
}


@dataclass(frozen=True)
class Price:
    input: float  # USD per 1M input tokens
    output: float  # USD per 1M output tokens
    cached_input: float | None = None  # USD per 1M prompt tokens read from the prompt cache
    cache_write: float | None = None  # USD per 1M prompt tokens written to it (5-minute TTL)
    cache_write_1h: float | None = None  # the same with Anthropic's 1-hour TTL
    cache_storage: float | None = None  # USD per 1M cached tokens per hour (Gemini explicit caches)
    batch: float | None = None  # the batch API's factor on every price (0.5: half)

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
        scaled = {k: (None if v is None else v * f) for k, v in (
            ("cached_input", self.cached_input), ("cache_write", self.cache_write),
            ("cache_write_1h", self.cache_write_1h), ("cache_storage", self.cache_storage))}
        return replace(self, input=self.input * f, output=self.output * f, **scaled)


def _anthropic(inp: float, out: float) -> Price:
    """Anthropic's caching prices are fixed multiples of the input price: writes 1.25× (5
    minutes) or 2× (1 hour), reads 0.1×; batches half price."""
    return Price(inp, out, cached_input=round(inp * 0.1, 6), cache_write=round(inp * 1.25, 6),
                 cache_write_1h=round(inp * 2, 6), batch=0.5)


def _openai(inp: float, out: float, cached: float) -> Price:
    return Price(inp, out, cached_input=cached, batch=0.5)  # writes cost nothing extra


def _gemini(inp: float, out: float, cached: float, storage: float) -> Price:
    # an explicit cache's creation is billed as input tokens, its storage by the hour
    return Price(inp, out, cached_input=cached, cache_write=inp, cache_storage=storage, batch=0.5)


BUILTIN: dict[str, Price] = {
    "openai:gpt-5": _openai(1.25, 10.00, 0.125),
    "openai:gpt-5-mini": _openai(0.25, 2.00, 0.025),
    "openai:gpt-5-nano": _openai(0.05, 0.40, 0.005),
    "openai:gpt-4o": _openai(2.50, 10.00, 1.25),
    "openai:gpt-4o-mini": _openai(0.15, 0.60, 0.075),
    "openai:gpt-4.1": _openai(2.00, 8.00, 0.50),
    "openai:gpt-4.1-mini": _openai(0.40, 1.60, 0.10),
    "openai:gpt-4.1-nano": _openai(0.10, 0.40, 0.025),
    "openai:o3": _openai(2.00, 8.00, 0.50),
    "openai:o3-mini": _openai(1.10, 4.40, 0.55),
    "openai:o4-mini": _openai(1.10, 4.40, 0.275),
    "anthropic:claude-opus-4-5": _anthropic(5.00, 25.00),
    "anthropic:claude-opus-4-1": _anthropic(15.00, 75.00),
    "anthropic:claude-sonnet-4-5": _anthropic(3.00, 15.00),
    "anthropic:claude-sonnet-4-0": _anthropic(3.00, 15.00),
    "anthropic:claude-haiku-4-5": _anthropic(1.00, 5.00),
    "anthropic:claude-3-5-haiku-latest": _anthropic(0.80, 4.00),
    "anthropic:claude-3-5-sonnet-latest": _anthropic(3.00, 15.00),
    "anthropic:claude-3-7-sonnet-latest": _anthropic(3.00, 15.00),
    # Gemini 2.5 Pro: prompts up to 200K tokens (longer ones cost 2×; the grids here stay below)
    "gemini:gemini-2.5-pro": _gemini(1.25, 10.00, 0.125, 4.50),
    "gemini:gemini-2.5-flash": _gemini(0.30, 2.50, 0.03, 1.00),
    "gemini:gemini-2.5-flash-lite": _gemini(0.10, 0.40, 0.01, 1.00),
    "gemini:gemini-2.0-flash": _gemini(0.10, 0.40, 0.025, 1.00),
    "gemini:gemini-1.5-flash": _gemini(0.075, 0.30, 0.01875, 1.00),
}
FREE_PREFIXES = ("local", "llamacpp:", "sim:", "hf:")
_OPTIONAL = ("cached_input", "cache_write", "cache_write_1h", "cache_storage", "batch")


def user_prices_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "ctxprobe" / "prices.yaml"


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    table = dict(BUILTIN)
    p = Path(path) if path else user_prices_path()
    if not p.is_file():
        if path:
            raise CtxprobeError(f"price file {p} not found")
        return table
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        for model, entry in data.items():
            extra = {k: float(entry[k]) for k in _OPTIONAL if entry.get(k) is not None}
            table[str(model)] = Price(float(entry["input"]), float(entry["output"]), **extra)
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError):
        raise CtxprobeError(f"price file {p} must map model: {{input: USD/1M, output: USD/1M}} "
                            f"(optional: {', '.join(_OPTIONAL)})") from None
    return table


def price_for(model: str, table: dict[str, Price] | None = None) -> Price | None:
    if model == "local" or model.startswith(FREE_PREFIXES):
        return Price(0.0, 0.0)
    table = table if table is not None else load_prices()
    base = model.split("?", 1)[0]
    return table.get(base)
