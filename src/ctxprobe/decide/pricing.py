"""Every price and window ``decide`` reads goes through the two functions here.

:func:`price_lookup` is the one place a model's price is found: a price file may price any
model, local and simulated ones included (a decision rehearsed on sims, or on a user's own
servers at their cost per 1M tokens); a key with the model's ``?k=v`` options is matched
before the bare name (two sims of one kind can have two prices), and a served model's
name before its ``@URL`` (``openai-compat:my-model-awq`` prices ``vllm/my-model-awq`` on
any server) (:meth:`ctxprobe.spec.names.ModelRef.price_keys`). A model the price table
does not hold has no price here, free provider or not: a decision ranks it after every
priced one and says so, rather than counting it as costing nothing (a run missing from
the price file would otherwise win every band).
:func:`advertised_window` is the one place a model's window is found.
"""

from __future__ import annotations

from pathlib import Path

from ctxprobe.core.catalog import age_note, context_window, model_info
from ctxprobe.core.runmeta import RunMeta
from ctxprobe.plan.prices import Price, PriceTable, load_prices, price_for, prices_as_of
from ctxprobe.spec.names import ModelRef

__all__ = ["Price", "advertised_window", "input_price", "price_age_notes", "price_lookup", "price_table"]


def price_table(path: str | Path | None = None) -> PriceTable:
    """The built-in prices extended by ``path`` (else the user's price file, if any)."""
    return load_prices(path)


def price_lookup(model: ModelRef, table: PriceTable, *, prompt_tokens: int | None = None) -> Price | None:
    """The price of ``model`` for a prompt of ``prompt_tokens`` (its long-context tier where
    the table has one), or None when the table holds no price for it (a local or simulated
    model included: a decision's prices come from the price file, then genai-prices)."""
    if not any(key in table for key in model.price_keys()):
        known = model_info(model)  # the library's price of a hosted model; a provider's own note prices nothing
        if known is None or not known.library:
            return None
    return price_for(model, table, prompt_tokens=prompt_tokens)  # the tier that bills that prompt


def input_price(model: ModelRef, table: PriceTable, *, prompt_tokens: int | None = None) -> float | None:
    """USD per 1M input tokens for a prompt of ``prompt_tokens`` (None: no price known)."""
    price = price_lookup(model, table, prompt_tokens=prompt_tokens)
    return None if price is None else price.input


def advertised_window(model: ModelRef, meta: RunMeta) -> int | None:
    """The model's advertised context window in tokens, where known: what its server
    reported at preflight, its trained context (GGUF/HF files, or the server's), the
    catalog's published window, a sim's ``ctx=`` option."""
    served = meta.preflight.context_window if meta.preflight is not None else None
    for value in (served, meta.trained_context, meta.served_trained_context):
        if isinstance(value, int) and value > 0:
            return value
    known = context_window(model)  # the provider's profile: a hosted model's published window
    if known:
        return known
    ctx = model.options.get("ctx", "") if model.provider == "sim" else ""
    return int(ctx) if ctx.isdigit() else None


def price_age_notes(models: list[ModelRef], table: PriceTable) -> list[str]:
    """How old the built-in prices a decision reads are, one line per model whose dated
    table entry is past the catalog's staleness limit (a price file's undated entries, and
    free models, say nothing)."""
    notes = []
    for model in dict.fromkeys(models):
        as_of = prices_as_of(model, table)
        stale = age_note(as_of) if as_of else None
        if stale:
            notes.append(f"{model}: {stale}")
    return notes
