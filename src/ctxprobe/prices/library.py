"""Hosted models' prices and windows from genai-prices (Pydantic's price library, a core
dependency): its bundled data only, read offline.

The library is never asked to fetch: its ``UpdatePrices`` (the only code in it that goes
to the network) is never started here, and :func:`snapshot` refuses a snapshot that came
from an auto-update, so a price is always the installed version's. Each price is turned
into the fields of ctxprobe's :class:`ctxprobe.core.catalog.Price` tiers (the catalog
builds them: nothing here imports it) exactly as the library applies
them: a tier bills a request whose whole prompt (cache reads and writes included) is over
its ``start``; cache reads, 5-minute and 1-hour writes at their own prices; the batch
variant (``processing: batch``) as its own prices, not a factor, so a batch price the
provider leaves at the standard rate (OpenAI's cached input) stays so.

Which library provider a ctxprobe provider's models are in is declared with the provider
(:attr:`ctxprobe.core.catalog.ProviderInfo.price_library`)."""

from __future__ import annotations

import datetime as _dt
import functools
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ctxprobe.errors import CtxprobeError

__all__ = ["BATCH", "LibraryModel", "library_model", "library_models", "library_version", "snapshot"]

#: The price context genai-prices selects its batch variants with.
BATCH = {"processing": "batch"}
#: genai-prices' price keys → ctxprobe's Price fields.
_KEYS = {"input_mtok": "input", "output_mtok": "output", "cache_read_mtok": "cached_input",
         "cache_write_mtok": "cache_write", "cache_write_1h_mtok": "cache_write_1h"}


def library_version() -> str:
    """``genai-prices X.Y.Z``: the installed library's version."""
    import genai_prices

    return f"genai-prices {genai_prices.__version__}"


def snapshot() -> Any:
    """The library's bundled data (never an auto-updated copy fetched from the network)."""
    from genai_prices import data_snapshot

    snap = data_snapshot.get_snapshot()
    if snap.from_auto_update:
        raise CtxprobeError("genai-prices was given prices fetched at run time (UpdatePrices); ctxprobe prices "
                            "offline from the installed version's data: stop the updater")
    return snap


def _now() -> _dt.datetime:
    return _dt.datetime.now(tz=_dt.timezone.utc)


def _value(price: Any, prompt: int) -> float | None:
    """USD per 1M at a prompt of ``prompt`` tokens (the library's rule: the highest tier
    whose ``start`` the whole prompt is over)."""
    if price is None:
        return None
    if isinstance(price, Decimal):
        return float(price)
    applicable = price.base
    for tier in reversed(price.tiers):
        if prompt > tier.start:
            applicable = tier.price
            break
    return float(applicable)


def _starts(*prices: Any) -> list[int]:
    starts = {0}
    for model_price in prices:
        for key in _KEYS:
            value = getattr(model_price, key, None)
            if value is not None and not isinstance(value, Decimal):
                starts.update(t.start for t in value.tiers)
    return sorted(starts)


def _tier(model_price: Any, above: int, batch: Any = None) -> dict[str, Any] | None:
    """One tier as :class:`ctxprobe.core.catalog.Price`'s fields (``batch_tier``: the batch
    variant's own tier; ``batch``: its factor on the input price, for display)."""
    fields = {ours: _value(getattr(model_price, key, None), above + 1) for key, ours in _KEYS.items()}
    if fields["input"] is None or fields["output"] is None:
        return None
    out: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
    out["above"] = above
    batch_tier = _tier(batch, above) if batch is not None else None
    if batch_tier is not None:
        out["batch_tier"] = batch_tier
        out["batch"] = batch_tier["input"] / fields["input"] if fields["input"] else None
    return out


@dataclass(frozen=True)
class LibraryModel:
    """What genai-prices knows of one model, as plain data (made into a
    :class:`ctxprobe.core.catalog.ModelInfo` by the catalog)."""

    name: str
    tiers: tuple[dict[str, Any], ...]
    window: int | None
    as_of: str  # the date the price in force took effect ("" undated)
    source: str
    deprecated: bool
    library: str  # genai-prices X.Y.Z
    library_id: str  # provider/model in the library


def _since(model: Any, when: _dt.datetime) -> str:
    """The date the price in force took effect, where the library dates it ("" undated)."""
    if isinstance(model.prices, list):
        for conditional in reversed(model.prices):
            c = conditional.constraint
            if c is None or c.active(when):
                return c.start_date.isoformat() if c is not None and hasattr(c, "start_date") else ""
    return ""


def _convert(provider: Any, model: Any, name: str, when: _dt.datetime) -> LibraryModel:
    standard = model.get_prices(when)
    batched = model.get_prices(when, BATCH)
    has_batch = any(v.when == BATCH and (v.constraint is None or v.constraint.active(when))
                    for v in model.price_variants or ())
    tiers = []
    for start in _starts(standard, batched if has_batch else standard):
        tier = _tier(standard, start, batched if has_batch else None)
        if tier is not None:
            tiers.append(tier)
    pages = list(provider.pricing_urls or [])
    source = f"{library_version()} ({provider.id}/{model.id}; {pages[0] if pages else 'no page named'})"
    if model.price_comments:
        source += f": {model.price_comments.strip()}"
    return LibraryModel(name, tuple(tiers), model.context_window, _since(model, when), source, bool(model.deprecated),
                        library_version(), f"{provider.id}/{model.id}")


@functools.lru_cache(maxsize=512)
def _cached(library: str, name: str, day: str) -> LibraryModel | None:
    snap = snapshot()
    try:
        provider, model = snap.find_provider_model(name, None, library, None)
    except LookupError:
        return None
    return _convert(provider, model, name, _now())


def library_model(library: str, name: str) -> LibraryModel | None:
    """What genai-prices knows of model ``name`` of its provider ``library`` (``openai``,
    ``anthropic``, ``google``); None when it does not know the model."""
    if not library or not name:
        return None
    return _cached(library, name.lower(), _now().date().isoformat())


def library_models(library: str) -> list[LibraryModel]:
    """Every model of the library's provider ``library`` priced in input and output tokens."""
    snap = snapshot()
    try:
        provider = snap.find_provider(None, library, None)
    except LookupError:
        return []
    when = _now()
    out = []
    for model in provider.models:
        if provider.find_model(model.id) is not model:
            continue  # its id is no name it answers to (``ft:gpt-4o`` matches ``ft:gpt-4o:…``), or another model's
        info = _convert(provider, model, model.id, when)
        if info.tiers:
            out.append(info)
    return out
