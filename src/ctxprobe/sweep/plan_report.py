"""``ctxprobe plan`` as one library call: :func:`plan_report` returns everything the plan
prints — the grid's size and price, how it is dispatched, the three prices, the adaptive
estimate — and its warnings; the CLI only prints it. Nothing is sent.

Refused here, before anything is built, in one line each: a retired model, and lengths
past the model's window as the catalog knows it (:func:`ctxprobe.core.catalog.context_window`;
``--allow-beyond-window`` lets them through, as for ``run``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.cases.families import check_families
from ctxprobe.cases.fitting import fitted_spec, too_short_lines
from ctxprobe.cases.sizing import Sizes, needs_building, plan_beyond_trained, plan_mean_sizes, plan_sizes
from ctxprobe.core.catalog import age_note, check_model, context_window, model_info, provider_info
from ctxprobe.core.loader import resolve
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import check_model_name
from ctxprobe.plan.grid import PlanSummary, summarize
from ctxprobe.prices.table import PriceTable, load_prices, price_for
from ctxprobe.plan.scheduling import dispatch, reports_slots
from ctxprobe.spec import Spec
from ctxprobe.spec.names import ModelRef
from ctxprobe.sweep.adaptive_cost import AdaptiveCost
from ctxprobe.sweep.pricing import PricePlan, price_plan
from ctxprobe.analysis.resolving import grid_power

__all__ = ["AdaptivePlan", "PlanReport", "grid_power", "plan_report", "window_refusal", "window_source"]


@dataclass(frozen=True)
class AdaptivePlan:
    """``plan --adaptive``: the adaptive sweep's settings, to estimate its cost."""

    confidence: float = 0.95
    bisect: int = 0
    token_budget: int | None = None


@dataclass
class PlanReport:
    """What ``ctxprobe plan`` shows: :meth:`lines` on standard output, :attr:`warnings`
    (each one line) on standard error."""

    spec: Spec
    summary: PlanSummary
    dispatch: str
    prices: PricePlan
    adaptive: AdaptiveCost | None = None
    warnings: list[str] = field(default_factory=list)
    table: PriceTable = field(default_factory=dict)  # the price file's entries the plan read

    def to_dict(self) -> dict[str, Any]:
        """``plan --json``: the grid, its three prices and where they and the window came from,
        the time estimate and where its speeds came from, what the grid can show per family
        and what the server said (the text plan's lines)."""
        s = self.summary
        window, source = window_source(self.spec.model, self.table)
        return {"model": self.spec.model, "requests": s.requests, "cells": s.cells,
                "input_tokens": s.input_tokens, "output_tokens": s.max_output_tokens,
                "reasoning_tokens": s.reasoning_tokens, "cost_at_most": s.cost_usd,
                "prices": self.prices.plan_json(), "window": {"tokens": window, "source": source},
                "time": {"seconds": s.seconds, "source": s.speed_note if s.seconds is not None else None},
                "can_show": list(self.power), "server": self.server,
                **({"too_short": too_short_lines(self.spec)} if self.spec.too_short else {}),
                "dispatch": self.dispatch, "warnings": list(self.warnings),
                "adaptive": self.adaptive.lines() if self.adaptive is not None else None}

    #: What the grid can show per family (:func:`grid_power`; empty for the adaptive walk).
    power: list[str] = field(default_factory=list)
    #: What the model's server said when asked (None: not a served model).
    server: str | None = None

    def lines(self) -> list[str]:
        out = [*self.summary.lines(), *too_short_lines(self.spec), *self.power,
               *([self.server] if self.server else []), self.dispatch, *self.prices.lines()]
        if self.adaptive is not None:
            out += self.adaptive.lines()
        return out


def window_source(model: ModelRef, table: PriceTable | None = None) -> tuple[int | None, str | None]:
    """The model's window as the plan knows it, and where it came from: a price file's
    entry (one giving the window alone included), genai-prices (with its version), or a
    provider profile's note; (None, None): unknown until the run asks the model's server."""
    info = model_info(model, table)
    window = context_window(model, table)
    if info is None or window is None:
        return None, None
    if info.window_source:
        return window, info.window_source
    if info.library and window == info.window:
        return window, f"{info.library} ({info.library_id})"
    return window, info.source or "price file"


def window_refusal(spec: Spec, sizes: Sizes | None, table: PriceTable | None = None) -> str | None:
    """Why ``spec``'s longest case cannot fit the model's window (None: it fits, or the
    window is not known, or ``allow_beyond_window``)."""
    window = context_window(spec.model, table)
    if window is None or spec.allow_beyond_window:
        return None
    from ctxprobe.core.family_lookup import family_class, family_names

    known = set(family_names())
    thinking = max(spec.reasoning_budgets or [0])

    def output(label: str) -> int:  # as run's check: some families' lengths include the output
        name = str((spec.families[label] or {}).get("family", label))
        # the registry fills FamilyBase's optional members in (length_includes_output among them)
        family: Any = family_class(name) if name in known else None
        inside = family is not None and bool(family.length_includes_output)
        return (0 if inside else spec.decoding.max_tokens) + thinking

    tokens = sizes or {(label, n): n for label in spec.families for n in spec.lengths_of(label)}
    (label, length), longest = max(tokens.items(), key=lambda kv: kv[1] + output(kv[0][0]))
    if longest + output(label) <= window:
        return None
    what = f"length {longest:,}" if longest == length else f"{label} length {length:,} ({longest:,} tokens)"
    info = model_info(spec.model, table)
    more = (f" ({info.long_window:,} with ?{info.long_option})"
            if info is not None and info.long_window and info.long_window > window else "")
    return (f"{what} + {output(label)} output tokens exceeds {spec.model}'s window of {window:,} tokens{more}; "
            "drop that length or pass --allow-beyond-window")


def plan_report(spec: Spec, *, adaptive: AdaptivePlan | None = None,
                progress: Callable[[str], None] | None = None, ask_server: bool = True) -> PlanReport:
    """The plan of ``spec``, priced (each case at its prompt length's tier) and checked
    against the model's window; ``progress`` hears what takes a while. A served model's
    server is asked (``ask_server``; :mod:`ctxprobe.sweep.server_probe`) for its slots and
    its prefill speed, which the dispatch line and the time estimate then use."""
    for model in (spec.model, spec.judge):  # a mistyped model (sim:perfct) is refused before anything is planned
        if model:
            check_model_name(model)
    check_families(spec)  # a mistyped family (naih) or parameter is refused as run refuses it
    table = load_prices(spec.prices)
    if not needs_building(spec):  # lengths in tokens: a length past the window is refused before any case is built
        refusal = window_refusal(spec, None, table)
        if refusal:
            raise CtxprobeError(refusal)
    spec = fitted_spec(spec)  # a family too short for a length runs at the others: said in the lines
    warnings: list[str] = []
    deprecated = check_model(spec.model, table)  # raises for a retired model
    if deprecated:
        warnings.append(deprecated)
    if adaptive is not None:
        from ctxprobe.sweep.adaptive import check_adaptive

        check_adaptive(spec)  # refused before the plan is printed, as run --adaptive refuses it
    sizes = plan_sizes(spec)
    refusal = window_refusal(spec, sizes, table)
    if refusal:
        raise CtxprobeError(refusal)
    info = model_info(spec.model, table)
    # families not sized in tokens (the phone book's books) are priced at their mean case, not their largest
    mean = plan_mean_sizes(spec)
    facts = None
    if ask_server:
        from ctxprobe.sweep.server_probe import ask_server as ask

        if progress is not None and reports_slots(spec.model):
            progress(f"asking {spec.model}'s server for its slots and timing two short requests")
        facts = ask(spec)
    measured = (facts.prefill, facts.decode) if facts is not None and facts.prefill else None
    summary = summarize(spec, info if info is not None and info.prices else price_for(spec.model, table),
                        mean if mean is not None else sizes, measured=measured)
    price = price_for(spec.model, table)
    if progress is not None and price is not None and (price.input or price.output):
        progress("measuring shared prefixes for the cached price: building the first prefix group of each length")
    prices = price_plan(spec, table=table)
    cost = None
    if adaptive is not None:
        from ctxprobe.sweep.adaptive_cost import adaptive_cost

        cost = adaptive_cost(spec, confidence=adaptive.confidence, bisect=adaptive.bisect,
                             token_budget=adaptive.token_budget)
    if info is not None and not info.library and price is not None and (price.input or price.output):
        stale = age_note(info.as_of)
        if stale:
            warnings.append(f"{spec.model}: {stale}")
    notes = provider_info(spec.model.provider).plan_notes
    if notes is not None:  # the provider's own word on this plan (Claude's thinking rules)
        warnings.extend(resolve(notes, what=f"provider '{spec.model.provider}': its plan notes")(spec))
    beyond = plan_beyond_trained(spec, sizes)
    if beyond:
        warnings.append(beyond)
    how = (dispatch(spec, facts.slots, asked=True, server_text=facts.slots_text()) if facts is not None
           and facts.reachable else dispatch(spec))
    report = PlanReport(spec, summary, how.line(), prices, cost, warnings, table,
                        power=grid_power(spec) if adaptive is None else [])
    if facts is not None:
        report.server = facts.line()
    return report
