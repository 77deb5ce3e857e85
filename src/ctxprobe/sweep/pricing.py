"""The plan's three prices for one model — on demand, with prompt caching, as a batch —
from the grid's built prefix groups (:func:`ctxprobe.cases.prefixes.plan_cached`) and the
provider's caching rules (:mod:`ctxprobe.plan.caching`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.cases.builder import BuildSettings, CaseBuilder
from ctxprobe.cases.families import build_families
from ctxprobe.cases.prefixes import plan_cached, prefix_counter
from ctxprobe.core.case import Case
from ctxprobe.core.family import Family
from ctxprobe.plan.caching import NO_CACHE, PRICING_MODES, CachedTotals, CacheRules, Pricing, cache_rules
from ctxprobe.plan.grid import PlannedCase, summarize
from ctxprobe.core.catalog import BatchPrice, ModelInfo, batch_price, model_info
from ctxprobe.prices.table import Price, PriceTable, load_prices, price_for
from ctxprobe.spec import Spec
from ctxprobe.spec.names import as_ref
from ctxprobe.haystack.context import BuildContext
from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer
from ctxprobe.tokenizers.base import Tokenizer

_LABELS: dict[Pricing, str] = {"on-demand": "on demand", "cached": "cached", "batch": "batch"}


@dataclass
class PricePlan:
    model: str
    price: Price | None
    rules: CacheRules
    mode: Pricing  # the one --max-cost caps
    max_cost: float | None
    totals: CachedTotals | None = None  # None: no price, or free
    costs: dict[str, float | None] = field(default_factory=dict)
    info: ModelInfo | None = None  # the model's catalog entry: price tiers, when they were read
    as_of: str = ""  # when the price was read ("" unknown: a price file's own)
    #: whose the batch price is (genai-prices', a price file's factor, ctxprobe's estimate)
    batch: BatchPrice | None = None

    def _tiers(self) -> str:
        tiers = self.info.prices[1:] if self.info is not None else ()
        return "".join(f"; over {t.above:,} prompt tokens ${t.input:g} / ${t.output:g}" for t in tiers)

    def lines(self) -> list[str]:
        if self.price is None or self.totals is None:
            return []
        p, t = self.price, self.totals
        when = self._when()
        out = [f"prices ({when}; ${p.input:g} / ${p.output:g} per 1M in / out{self._tiers()}):"]
        for mode in PRICING_MODES:
            cost = self.costs.get(mode)
            mark = " <- --max-cost" if mode == self.mode and self.max_cost is not None else ""
            whose = f" ({self.batch.label()})" if mode == "batch" and self.batch is not None else ""
            if cost is None:
                out.append(f"  {_LABELS[mode]:<10} {self.batch.label() if self.batch else 'unknown'}{mark}")
                continue
            out.append(f"  {_LABELS[mode]:<10} ${cost:,.2f}{mark}{whose}")
        out.append(f"  cached: {t.read_share:.1%} of {t.prompt:,} prompt tokens read from the cache, "
                   f"{t.written / t.prompt if t.prompt else 0:.1%} written")
        out.append(f"  ({self._how()})")
        if self.batch is not None and self.batch.basis == "estimate":
            out.append(f"  (batch: genai-prices has no batch price for this model; {self.batch.source})")
        chosen = self.costs.get(self.mode)
        if self.max_cost is not None and chosen is not None:
            verdict = "within it" if chosen <= self.max_cost else "over it: the run stops at the cap"
            out.append(f"--max-cost ${self.max_cost:,.2f} caps the {_LABELS[self.mode]} price: {verdict}")
        return out

    def _when(self) -> str:
        if self.info is not None and self.info.library:
            since = f", in effect since {self.as_of}" if self.as_of else ""
            return f"{self.info.library}'s {self.info.library_id}{since}"
        return f"list prices of {self.as_of}" if self.as_of else "prices of your price file"

    def _how(self) -> str:
        r = self.rules
        if r.mechanism == "breakpoints":
            return f"cache_control breakpoints, at most {r.max_breakpoints} a request, {r.min_tokens:,}-token minimum"
        if r.mechanism == "automatic":
            step = f", {r.increment}-token steps" if r.increment > 1 else ""
            return f"automatic prefix caching, {r.min_tokens:,}-token minimum{step}"
        if r.mechanism == "explicit":
            return f"explicit caches, {r.min_tokens:,}-token minimum, {r.ttl_s / 60:g}-minute TTL"
        return "no prompt caching"

    def to_dict(self) -> dict[str, Any]:
        t = self.totals
        return {"mode": self.mode, "costs": dict(self.costs), "as_of": self.as_of or "?",
                "batch_basis": self.batch.basis if self.batch is not None else None,
                "prompt_tokens": t.prompt if t else None, "read_tokens": t.read if t else None,
                "written_tokens": t.written if t else None, "mechanism": self.rules.mechanism}

    def plan_json(self) -> dict[str, Any]:
        """``plan --json``'s prices: the three in USD (None: unknown, or no batch price), the
        requests by prompt size they were priced from, and where the price came from (the
        batch price's own: ``batch_basis`` library / price file / estimate / unknown, and an
        estimate's page in ``batch_source``)."""
        t, info = self.totals, self.info
        requests = sum(p.requests for p in t.parts.values()) if t else 0
        by_size = [{"prompt_tokens": size, "requests": part.requests, "read_tokens": part.read,
                    "written_tokens": part.written} for size, part in sorted(t.parts.items())] if t else []
        return {"on_demand": self.costs.get("on-demand"), "cached": self.costs.get("cached"),
                "batch": self.costs.get("batch"), "mode": self.mode, "max_cost": self.max_cost,
                "batch_basis": self.batch.basis if self.batch is not None else None,
                "batch_source": self.batch.described() if self.batch is not None and self.batch.price else None,
                "requests": requests, "prompt_tokens": t.prompt if t else None,
                "output_tokens": t.output if t else None, "by_prompt_size": by_size,
                "caching": self.rules.mechanism, "cache_min_tokens": self.rules.min_tokens,
                "source": info.source if info is not None else None,
                "as_of": self.as_of or None,
                "library": info.library or None if info is not None else None,
                "library_model": info.library_id or None if info is not None else None,
                "deprecated": info.deprecated or None if info is not None else None}


def rules_for(spec: Spec) -> CacheRules:
    """The caching the run will get: the provider's rules, or only what a provider does by
    itself (automatic caching) with ``cache_prompt: off``."""
    rules = cache_rules(spec.model, explicit=spec.cache_prompt == "explicit")
    if spec.cache_prompt == "off" and rules.mechanism != "automatic":
        return NO_CACHE
    return rules


def periods_of(families: Mapping[str, tuple[Family, object]]) -> dict[str, int]:
    """Family label → repetitions that share one text (``prefix_period``)."""
    return {label: int(family.prefix_period(params)) for label, (family, params) in families.items()}


def price_plan(spec: Spec, *, tokenizer: Tokenizer | None = None, tokenizer_name: str | None = None,
               builder: CaseBuilder | None = None, build: Callable[[PlannedCase], Case] | None = None,
               table: PriceTable | None = None) -> PricePlan:
    """The three prices of ``spec``'s grid; builds the first prefix group of each (family,
    length) to measure its shared prefixes (nothing is built for free or unpriced models).
    ``build`` replaces ``builder.build`` (a sweep keeps those cases to send them)."""
    table = table if table is not None else load_prices(spec.prices)
    price = price_for(spec.model, table)
    rules = rules_for(spec)
    info = model_info(spec.model, table)
    plan = PricePlan(spec.model, price, rules, spec.pricing_mode, spec.max_cost, info=info,
                     as_of=info.as_of if info is not None else "",
                     batch=batch_price(price, as_ref(spec.model).provider) if price is not None else None)
    if price is None or (price.input == 0 and price.output == 0):
        return plan
    name = tokenizer_name or spec.tokenizer or infer_tokenizer(spec.model)
    tok = tokenizer or resolve_tokenizer(name, model=spec.model)
    if builder is None:
        families = build_families(spec, BuildContext(tokenizer=tok, haystack=spec.haystack, layout=spec.layout))
        builder = CaseBuilder(BuildSettings.of(spec, name), families)
    output = summarize(spec).max_output_tokens
    plan.totals = plan_cached(spec, rules, build or builder.build, periods_of(builder.families),
                              prefix_counter(name, tok), output)
    priced = info if info is not None and info.prices else price  # each request at its own tier
    plan.costs = {mode: plan.totals.cost(priced, mode, rules, spec.model) for mode in PRICING_MODES}
    return plan
