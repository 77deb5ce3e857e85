"""One stored run read for a decision: per family its effective length (the interval its
data allow, :mod:`ctxprobe.analysis.intervals`), what its cases contained, and its cost."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ctxprobe.analysis.adaptive_verdict import is_adaptive
from ctxprobe.analysis.efflength import EffectiveLength
from ctxprobe.analysis.grid import profile
from ctxprobe.analysis.natural import FamilyAgreement, natural_vs_synthetic, spec_family_names
from ctxprobe.analysis.reasoning import base_family, has_budgets, split_by_budget
from ctxprobe.core.catalog import batch_price, context_window
from ctxprobe.core.runmeta import RunMeta
from ctxprobe.core.rows import ResultRow
from ctxprobe.analysis.intervals import run_intervals
from ctxprobe.decide.content import Content, RunTotals, read_content
from ctxprobe.prices.table import Price, price_for
from ctxprobe.core.outcome import Outcome
from ctxprobe.report.format import length_unit
from ctxprobe.spec.names import ModelRef, as_ref
from ctxprobe.spec.threshold import Bar
from ctxprobe.store import RunRecord, open_existing

__all__ = ["FamilyFacts", "RunFacts", "advertised_window", "load_run"]


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


@dataclass(frozen=True)
class FamilyFacts:
    family: str
    bar: float
    interval: EffectiveLength
    content: dict[int, Content]  # per length (the family's own unit: tokens, or entries)
    length_unit: str  # "tokens", or "entries" for phone books sized in entries

    def value(self, length: int, unit: str, *, high: bool = False) -> int | None:
        """A length in ``unit``: the fewest among its cases (the most with ``high``)."""
        c = self.content.get(length)
        if c is None:
            return length if unit == self.length_unit else None
        return (c.high if high else c.low).get(unit)

    def first_fail(self) -> int | None:
        """The shortest length the data show confidently failing (the one after ``hi``)."""
        iv = self.interval
        after = [L for L in iv.lengths if iv.hi is None or L > iv.hi]
        if not after:
            return None
        nxt = after[0]
        if iv.states:
            return nxt if iv.states.get(nxt) == "fail" else None
        if nxt in iv.not_measured:
            return None
        return nxt if iv.upper_bounds.get(nxt, 1.0) < iv.threshold else None

    def verdict(self, length: int) -> str:
        """One length on its own: "pass" / "fail" (with the interval's confidence: pass at
        alpha/2, fail at alpha/(2K), as both the exact bounds and the walk's tests use),
        "open", or "untested" (an adaptive walk never sent it)."""
        iv = self.interval
        if length in iv.untested:
            return "untested"
        if length in iv.truncated or length in iv.not_measured:
            return "open"
        if iv.states:
            return iv.states.get(length, "open")
        if iv.lower_bounds.get(length, 0.0) >= iv.threshold - 1e-12:
            return "pass"
        if iv.upper_bounds.get(length, 1.0) < iv.threshold - 1e-12:
            return "fail"
        return "open"

    def tested(self) -> list[int]:
        """Lengths with scored cases (an adaptive walk's unsent ones are not)."""
        iv = self.interval
        return [L for L in iv.lengths if L not in iv.untested and L not in iv.not_measured]


@dataclass(frozen=True)
class RunFacts:
    run: RunRecord
    families: dict[str, FamilyFacts]
    totals: RunTotals
    price: Price | None
    window: int | None
    adaptive: bool
    errors: int = 0
    truncated: int = 0
    unsent: int = 0
    notes: list[str] = field(default_factory=list)
    #: Natural (``documents``) against each synthetic family of the run (same variant and
    #: budget), when it holds both.
    natural: list[FamilyAgreement] = field(default_factory=list)

    @cached_property
    def model(self) -> ModelRef:
        """The run's model as stored, parsed once (prices, windows and tokenizers read its parts)."""
        return as_ref(self.run.model)

    @property
    def tokens_per(self) -> dict[str, float]:
        """Prompt tokens per word and per character over the run's answered cases."""
        t = self.totals
        return {"tokens": 1.0, "words": t.prompt_tokens / t.words if t.words else 0.0,
                "chars": t.prompt_tokens / t.chars if t.chars else 0.0}

    def cost(self) -> tuple[float | None, str]:
        """(USD, how it is known): billed by the provider where it reported costs, else the
        run's tokens at the price table's list price (a run sent as provider batches at the
        batch price, by the rule plan and billing use), else unknown."""
        t = self.totals
        if not t.responses:
            return None, "not read"
        if t.billed_responses and t.billed_usd > 0:
            return t.billed_usd, "billed"
        price, how = self.price, "list price"
        if price is not None and (self.run.meta.transport or {}).get("batch"):
            batch = batch_price(price, self.model.provider)
            price, how = batch.price, f"list batch price, {batch.label()}"
        if price is None:
            return None, "unpriced"
        return (t.prompt_tokens * price.input + t.output_tokens * price.output) / 1e6, how


def load_run(run_id: str, store_path: str | Path, table: dict[str, Price], *, threshold: float | None,
             bars: Mapping[str, Bar] | None) -> RunFacts:
    """Read one run for :func:`ctxprobe.decide.decide`."""
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        rows = store.result_rows(run.run_id)
        counts = store.outcome_counts(run.run_id)
        units = {f: length_unit(run.spec, f) for f in {r.family for r in rows} | set(run.spec.get("families", {}))}
        content, totals = read_content(store.iter_case_records(run.run_id),
                                       {f: u == "tokens" for f, u in units.items()})
    bar = threshold if threshold is not None else float(run.spec.get("threshold", 0.856))
    rows = [r for r in rows if "@" not in r.family]  # noise floors and budget curves are not candidates
    thresholds, intervals = run_intervals(rows, run.spec, run.meta, threshold=bar, bars=bars, units=units)
    families = {f: FamilyFacts(f, thresholds.get(f, bar), iv, content.get(f, {}), units.get(f, "tokens"))
                for f, iv in sorted(intervals.items())}
    natural = natural_check(rows, bar, thresholds, spec_family_names(run.spec))
    notes = [natural_caveat(run.run_id, run.model, a) for a in natural if a.lengths and not a.agree]
    if len({r.family for r in rows}) < len([f for f in run.spec.get("families", {}) if "@" not in f]):
        missing = sorted(set(run.spec.get("families", {})) - {r.family for r in rows} - {f for f in units if "@" in f})
        if missing:
            notes.append(f"run {run.run_id} has no scored case of {', '.join(missing)}")
    model = as_ref(run.model)
    return RunFacts(run, families, totals, price_for(model, table), advertised_window(model, run.meta),
                    is_adaptive(run.meta), counts.get(Outcome.ERROR, 0), counts.get(Outcome.INPUT_TRUNCATED, 0),
                    max(0, run.n_planned - sum(counts.values())) if not is_adaptive(run.meta) else 0, notes,
                    natural)


def natural_check(rows: list[ResultRow], bar: float, thresholds: Mapping[str, float],
                  names: Mapping[str, str]) -> list[FamilyAgreement]:
    """The run's natural profiles against its synthetic ones, like with like: with
    reasoning budgets, each budget's curve (``documents@think1k``) against the same
    budget's (each at its family's bar)."""
    if has_budgets(rows):
        rows = split_by_budget(rows)
    bars = {r.family: thresholds.get(base_family(r.family), bar) for r in rows}
    return natural_vs_synthetic(profile(rows, bar, bars), names=names)


def natural_caveat(run_id: str, model: str, a: FamilyAgreement) -> str:
    """A run whose natural cases disagree with a synthetic family: that family's limit is
    not the one to plan the user's documents around."""
    lower = [c.length for c in a.lengths if c.differs and (c.natural_mean or 0.0) < (c.synthetic_mean or 0.0)]
    where = (f"scores below {a.synthetic} at {', '.join(f'{L:,}' for L in lower)} tokens" if lower
             else f"differs from {a.synthetic}")
    return (f"run {run_id} ({model}): natural check: {a.natural} {where} (two-proportion test): "
            f"{a.synthetic}'s limit does not carry over to those documents; plan their use by the {a.natural} limit")


def facts_from_report(report: Any, table: dict[str, Price] | None = None) -> RunFacts | None:
    """A run as the HTML report loaded it (its intervals at its bars), for the report's
    decide section: lengths in tokens only (the stored prompts are not re-read there)."""
    from ctxprobe.prices.table import load_prices

    intervals: dict[str, EffectiveLength] | None = getattr(report, "intervals", None)
    if not intervals:
        return None
    run: RunRecord = report.run
    table = table if table is not None else load_prices(None)
    families = {f: FamilyFacts(f, iv.threshold, iv, {}, iv.unit) for f, iv in sorted(intervals.items())
                if "@" not in f and iv.unit == "tokens"}
    model = as_ref(run.model)
    return RunFacts(run, families, RunTotals(), price_for(model, table), advertised_window(model, run.meta),
                    is_adaptive(run.meta))
