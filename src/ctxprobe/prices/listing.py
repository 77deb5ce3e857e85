"""``ctxprobe prices``: the price table as rows (one per model and tier), printed at 80
columns, and the entries to check (a price file's older than
:data:`ctxprobe.core.catalog.STALE_DAYS` days, deprecated or retired).

Rows come from the user's price file, then from genai-prices for every provider that
names a library provider (each model the library prices in input and output tokens, with
the library's version, the date the price took effect where it dates it, and its page)."""

from __future__ import annotations

import datetime as _dt
import textwrap
from dataclasses import asdict, dataclass, replace
from typing import Any

from ctxprobe.core.catalog import (STALE_DAYS, ModelInfo, age_days, batch_price, from_library, known_model,
                                   provider_info)
from ctxprobe.prices.table import Price, PriceTable
from ctxprobe.spec.names import as_ref

__all__ = ["PriceRow", "price_lines", "price_problems", "price_rows"]


@dataclass(frozen=True)
class PriceRow:
    model: str
    tier: str  # "base", or "> 200,000": prompts over that many tokens
    input: float
    output: float
    cached: float | None
    batch: float | None  # the batch price's share of on-demand (on the input price)
    window: int | None
    long_window: int | None
    as_of: str
    source: str
    status: str  # "", "deprecated: …" or "retired: …"
    library: str = ""  # "genai-prices X.Y.Z": as_of is the date the price took effect ("" undated)
    batch_input: float | None = None  # the batch API's prices (None: no batch API known)
    batch_output: float | None = None
    #: whose the batch price is: library (genai-prices'), price file, estimate (ctxprobe's,
    #: from the provider's batch page: batch_source), unknown
    batch_basis: str = "unknown"
    batch_source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _status(info: ModelInfo) -> str:
    return f"retired: {info.retired}" if info.retired else f"deprecated: {info.deprecated}" if info.deprecated else ""


def _rows(model: str, info: ModelInfo) -> list[PriceRow]:
    rows = []
    provider = as_ref(model).provider
    for tier in info.prices:
        batch = batch_price(tier, provider)  # the one rule plan and billing use
        rows.append(PriceRow(model, "base" if not tier.above else f"> {tier.above:,}", tier.input, tier.output,
                             tier.cached_input, batch.factor, info.window, info.long_window, info.as_of,
                             info.source, _status(info), info.library,
                             batch.price.input if batch.price else None, batch.price.output if batch.price else None,
                             batch.basis, batch.described() if batch.basis == "estimate" else ""))
    return rows


def library_rows() -> list[PriceRow]:
    """Every model genai-prices prices for each registered provider naming a library
    provider, under the provider's own name (``anthropic:claude-opus-4-7``), with the
    provider profile's notes (retired, deprecated) on top: served models first, the
    deprecated then, the retired last."""
    from ctxprobe.core import registry
    from ctxprobe.prices.library import library_models

    rows: list[PriceRow] = []
    for entry in registry.entries("providers"):
        info = provider_info(entry.name)
        if not info.price_library:
            continue
        for found in library_models(info.price_library):
            if info.bare_hints and not found.name.startswith(info.bare_hints):
                continue  # Vertex's Claude models under google: another provider's
            merged = known_model(entry.name, found.name) or from_library(found)
            rows += _rows(f"{entry.name}:{found.name}", merged)
    # served models first, then the deprecated, the retired last; in name order within each
    return sorted(rows, key=lambda r: (r.status.startswith("retired"), r.status.startswith("deprecated"), r.model))


def price_rows(table: PriceTable, *, library: bool = True) -> list[PriceRow]:
    """One row per model and price tier: the price file's models first, in name order
    (aliases left out), then the library's (:func:`library_rows`) that the file does not override."""
    rows: list[PriceRow] = []
    for model in sorted(table):
        info = table[model]
        if isinstance(info, Price):
            info = ModelInfo(model, (info,))
        if not isinstance(info, ModelInfo) or model.split(":", 1)[-1] in info.aliases:
            continue
        rows += _rows(model, info)
    if library:
        # a window-only entry keeps the library's prices: its row is the library's, with that window
        priced = {m for m, v in table.items() if not isinstance(v, ModelInfo) or v.prices}
        rows += [replace(r, window=w.window, long_window=None) if isinstance(w := table.get(r.model), ModelInfo)
                 and w.window else r for r in library_rows() if r.model not in priced]
    return rows


def price_problems(rows: list[PriceRow], today: _dt.date | None = None) -> list[str]:
    """One line per model to check: its prices older than STALE_DAYS days, or retired or deprecated."""
    out: dict[str, str] = {}
    for row in rows:
        days = None if row.library else age_days(row.as_of, today)
        why = ["" if row.library else f"read {row.as_of}, {days} days ago" if days is not None and days > STALE_DAYS
               else "undated" if days is None else ""]
        why.append(row.status.split(":", 1)[0] if row.status else "")
        said = "; ".join(w for w in why if w)
        if said and row.model not in out:
            out[row.model] = f"{row.model}: {said}"
    return list(out.values())


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}" if value >= 0.01 else f"{value:.3g}"


def _window(row: PriceRow) -> str:
    if row.window is None:
        return "—"
    return _tokens(row.window) + (f"/{_tokens(row.long_window)}" if row.long_window else "")


def _tokens(n: int) -> str:
    if n < 1_000_000:
        return f"{n // 1000}K"
    return f"{n / 1_048_576:g}M" if n % 1_048_576 == 0 else f"{round(n / 1e6, 2):g}M"


def price_lines(rows: list[PriceRow]) -> list[str]:
    """The table at 80 columns: USD per 1M tokens; each model's source (and status) below it."""
    head = f"{'model':<36} {'tier':>9} {'in':>5} {'out':>5} {'cached':>6} {'batch':>5} {'window':>7}"
    out = [head, "-" * 80]
    for i, row in enumerate(rows):
        first = i == 0 or rows[i - 1].model != row.model
        name = (row.model if len(row.model) <= 36 else row.model[:35] + "…") if first else ""
        out.append(f"{name:<36} {row.tier:>9} {_num(row.input):>5} {_num(row.output):>5} {_num(row.cached):>6} "
                   f"{_batch(row):>5} {_window(row) if first else '':>7}")
        last = i == len(rows) - 1 or rows[i + 1].model != row.model
        if last:
            when = (f"in effect since {row.as_of}" if row.as_of else "undated") if row.library \
                else f"as of {row.as_of or '?'}"
            note = f"{when}: {row.source}" + (f" [{row.status}]" if row.status else "")
            out += textwrap.wrap(note, 80, initial_indent="  ", subsequent_indent="    ")
    out.append("USD per 1M tokens; tier: prompts over that many tokens; batch: the batch API's")
    out.append("factor on the input price (its own prices: --json); 0.5* : ctxprobe's estimate,")
    out.append("genai-prices having no batch price for the model: the provider's batch discount")
    sources = sorted({r.batch_source.rsplit("; ", 1)[-1] for r in rows if r.batch_basis == "estimate"})
    out += textwrap.wrap(f"(estimates from {', '.join(sources)})", 80, subsequent_indent="  ") if sources else []
    return out


def _batch(row: PriceRow) -> str:
    """The batch column: the factor, marked * where it is ctxprobe's estimate."""
    if row.batch is None:
        return "—"
    return _num(row.batch) + ("*" if row.batch_basis == "estimate" else "x")
