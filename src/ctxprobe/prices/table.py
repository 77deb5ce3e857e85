"""Prices per million tokens, for plans and ``--max-cost``.

Built-in prices are genai-prices' (:mod:`ctxprobe.prices.library`, the installed
version's bundled data, offline), for the providers that name a library provider
(:attr:`ctxprobe.core.catalog.ProviderInfo.price_library`): its tiers (a prompt over a
tier's start is billed entirely at that tier, as the library applies them), cache read
and write prices and batch prices. ``pip install -U genai-prices`` updates them; a user
file extends or overrides them: ``~/.config/ctxprobe/prices.yaml`` (or ``--prices FILE``) with
lines such as ``openai:gpt-4o-mini: {input: 0.15, output: 0.60, cached_input: 0.075}``
(optional keys: ``cached_input``, ``cache_write``, ``cache_write_1h``, ``cache_storage``,
``batch``, ``window``, ``as_of``, ``source`` and ``tiers``: a list of the same prices, each
with ``above: TOKENS``). An entry of ``window`` alone (``gemini:gemini-2.5-pro: {window:
1048576}``) gives a window the library lacks and keeps the library's prices. A price file may price any model, simulated and local ones
included; without one, local and simulated models have no price either. A model with no known price has
cost ``None``: the plan says so and ``--max-cost`` refuses to run it rather than guess.

Four prices besides input and output, each ``None`` where the provider has no such price:

- ``cached_input``: a prompt token read from the provider's prompt cache;
- ``cache_write``: a prompt token written to it (Anthropic 1.25× input for the 5-minute
  cache, ``cache_write_1h`` 2× for the hour; Gemini's explicit caches bill creation at
  the input price);
- ``cache_storage``: a cached token kept for an hour (Gemini's explicit caches);
- ``batch``: the factor a provider's batch API bills at (0.5: half price; a tier without
  one takes its entry's). Where neither a price file nor genai-prices gives a batch price,
  ctxprobe estimates it from the provider's batch discount (its page cited on the provider's
  profile) and says so: :func:`ctxprobe.core.catalog.batch_price`, the one rule for
  ``plan``, ``run --batch``'s billing and cap, ``prices`` and ``decide``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from ctxprobe.core.catalog import ModelInfo, Price, age_note, builtin_models, known_model
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import ModelRef, as_ref

__all__ = ["Price", "PriceTable", "input_price", "load_prices", "price_age_notes", "price_for", "prices_as_of",
           "user_prices_path"]

#: model (``provider:name``) → what is known of it; values may also be a bare :class:`Price`.
PriceTable = dict[str, Any]
_OPTIONAL = ("cached_input", "cache_write", "cache_write_1h", "cache_storage", "batch")


def user_prices_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "ctxprobe" / "prices.yaml"


def _price(entry: dict[str, Any], above: int = 0) -> Price:
    extra: dict[str, Any] = {k: float(entry[k]) for k in _OPTIONAL if entry.get(k) is not None}
    return Price(float(entry["input"]), float(entry["output"]), above=above, **extra)


def _entry(model: str, entry: dict[str, Any], path: Path) -> ModelInfo:
    window = entry.get("window")
    name = as_ref(model).name or model
    if "input" not in entry and "output" not in entry and window:  # the window alone: prices stay the library's
        return ModelInfo(name, window=int(window), as_of=str(entry.get("as_of", "")),
                         window_source=str(entry.get("source", f"price file {path}")))
    # a tier without its own batch factor takes the entry's: one batch rule for every tier
    inherited = {"batch": entry["batch"]} if entry.get("batch") is not None else {}
    tiers = [_price(entry)] + [_price({**inherited, **t}, int(t["above"])) for t in entry.get("tiers") or ()]
    return ModelInfo(name, tuple(sorted(tiers, key=lambda p: p.above)), window=int(window) if window else None,
                     as_of=str(entry.get("as_of", "")), source=str(entry.get("source", f"price file {path}")))


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The prices a provider profile declares itself (a plugin's), extended and overridden
    by the user's price file: each look-up reads this table first, then the library
    (:func:`ctxprobe.core.catalog.known_model`)."""
    table: PriceTable = {k: v for k, v in builtin_models().items() if v.prices}
    p = Path(path) if path else user_prices_path()
    if not p.is_file():
        if path:
            raise CtxprobeError(f"price file {p} not found")
        return table
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        for model, entry in data.items():
            table[str(model)] = _entry(str(model), entry, p)
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError):
        raise CtxprobeError(f"price file {p} must map model: {{input: USD/1M, output: USD/1M}} "
                            f"(optional: {', '.join(_OPTIONAL)}, window, as_of, source, "
                            "tiers: [{above: TOKENS, input: …, output: …}])") from None
    return table


def _lookup(model: str, table: PriceTable) -> Any:
    # a price file may price one option set (sim:decay?cliff=3000) apart from another
    ref = as_ref(model)
    found = next((table[key] for key in ref.price_keys() if key in table), None)
    if isinstance(found, ModelInfo) and not found.prices:
        found = None  # a window-only entry: the price is the library's
    if found is not None or ref.bare or not ref.name:
        return found
    return known_model(ref.provider, ref.name)


def price_for(model: str, table: PriceTable | None = None, *, prompt_tokens: int | None = None) -> Price | None:
    """The price of one request to ``model`` of ``prompt_tokens`` prompt tokens: the tier
    that bills it (the base tier when None), or None when no price is known. The one
    look-up of every price ctxprobe shows or bills (``plan``, ``--max-cost``, a run's
    ledger, ``decide``). A table entry wins (a price file may price any model, simulated
    and local ones included: a decision rehearsed on sims, or a user's own servers at
    their cost per 1M tokens; a key with the model's ``?k=v`` options before the bare name,
    a served model's name before its ``@URL``: :meth:`ctxprobe.spec.names.ModelRef.price_keys`);
    else genai-prices' price of a hosted model; else None, a free provider's model included:
    "no price known" is never shown or counted as $0 (``plan`` says to add it to a price
    file, ``--max-cost`` refuses to guess, ``decide`` ranks it after every priced run). A
    retired model keeps its price (to bill old runs); :func:`ctxprobe.core.catalog.check_model`
    refuses it."""
    table = table if table is not None else load_prices()
    found = _lookup(model, table)
    if isinstance(found, Price):
        return found
    if isinstance(found, ModelInfo):
        return found.price_at(prompt_tokens)  # None for a provider's own note (it prices nothing)
    return None


def input_price(model: str, table: PriceTable, *, prompt_tokens: int | None = None) -> float | None:
    """USD per 1M input tokens for a prompt of ``prompt_tokens`` (None: no price known)."""
    price = price_for(model, table, prompt_tokens=prompt_tokens)
    return None if price is None else price.input


def prices_as_of(model: str, table: PriceTable | None = None) -> str | None:
    """When ``model``'s hand-written price was read (None: not in the table, undated, or
    the library's, which is as current as the installed genai-prices)."""
    found = _lookup(model, table if table is not None else load_prices())
    return found.as_of or None if isinstance(found, ModelInfo) and not found.library else None


def price_age_notes(models: list[ModelRef], table: PriceTable) -> list[str]:
    """How old the built-in prices a decision reads are, one line per model whose dated
    table entry is past the catalog's staleness limit (a price file's undated entries, and
    unpriced models, say nothing)."""
    notes = []
    for model in dict.fromkeys(models):
        as_of = prices_as_of(str(model), table)
        stale = age_note(as_of) if as_of else None
        if stale:
            notes.append(f"{model}: {stale}")
    return notes
