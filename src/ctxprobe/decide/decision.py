"""``ctxprobe decide``: from stored runs to a choice of model per need, with prices."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxprobe.analysis.resolving import Settle, reps_clause
from ctxprobe.decide.choose import Choice, choose
from ctxprobe.decide.content import UNITS
from ctxprobe.decide.fairness import caveats
from ctxprobe.prices.table import Price, input_price, load_prices, price_age_notes
from ctxprobe.decide.runs import FamilyFacts, RunFacts, load_run
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.threshold import Bar
from ctxprobe.spec.units import fmt_length

__all__ = ["Decision", "Limit", "decide", "decide_runs", "use_limit"]


@dataclass(frozen=True)
class Limit:
    """A product limit for one run and one use: its weakest family's effective length."""

    run_id: str
    model: str
    use: str
    family: str | None  # the weakest family (None: a family of the use was not measured)
    lo: int | None
    hi: int | None
    unit: str
    window: int | None
    content: dict[str, int | None]  # the limit in words, chars (and entries) of content
    #: Every family as weak as the weakest (``family`` names them joined by "and").
    limited_by: tuple[str, ...] = ()
    #: No limit shown: for each family of the use not reliable at its shortest length, where
    #: that length is open, the cases that would settle it (the report's settle lines).
    settle: tuple[tuple[str, Settle], ...] = ()

    def settle_text(self) -> str:
        """"`--reps 5` would settle 1K at the rate observed" (a use of several families
        names each: "niah 1K and multihop 1K"); "" when nothing would."""
        several = len(self.settle) > 1 or "+" in self.use
        return reps_clause((f"{f} {fmt_length(s.length, s.unit)}" if several else fmt_length(s.length, s.unit), s)
                           for f, s in self.settle)

    def line(self) -> str:
        if self.family is None:
            return f"{self.use}: not every family of the use was measured"
        if self.lo is None:
            more = self.settle_text()
            return (f"{self.use}: no limit shown (limited by {self.family}: not reliable at any tested length"
                    + (f"; {more}" if more else "") + ")")
        share = f", {self.lo / self.window:.0%} of its {self.window:,}-token window" if self.window and \
            self.unit == "tokens" else ""
        extra = ", ".join(f"{v:,} {u}" for u, v in self.content.items() if v is not None and u != self.unit)
        upto = "" if self.hi == self.lo else f" (may reach {self.hi:,})" if self.hi is not None else ""
        return (f"{self.use}: prompt limit {self.lo:,} {self.unit}{upto}{share}; limited by {self.family}"
                + (f"; as content: {extra}" if extra else ""))

    def to_dict(self) -> dict[str, object]:
        return {"run_id": self.run_id, "model": self.model, "use": self.use, "family": self.family,
                "limited_by": list(self.limited_by or ([self.family] if self.family else [])), "lo": self.lo,
                "hi": self.hi, "unit": self.unit, "advertised_window": self.window,
                "share_of_window": self.lo / self.window if self.lo and self.window and self.unit == "tokens" else None,
                "content": self.content, "line": self.line(),
                "settle": [{"family": f, **s.to_dict()} for f, s in self.settle]}


@dataclass(frozen=True)
class Decision:
    runs: list[RunFacts]
    unit: str
    bands: list[int]
    choices: list[Choice]
    limits: list[Limit]
    caveats: list[str]
    uses: list[list[str]] = field(default_factory=list)
    table: dict[str, Price] = field(default_factory=dict, repr=False)  # the prices it was made with
    #: ``--layout``: the message layout the decision is for, and per run which label each
    #: family name stands for (:mod:`ctxprobe.decide.layout`); None: every family as measured.
    layout: str | None = None
    layout_labels: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return ({"layout": self.layout, "layout_labels": self.layout_labels} if self.layout else {}) | {
            "unit": self.unit, "bands": self.bands, "choices": [c.to_dict() for c in self.choices],
            "runs": [_run_dict(r, self.table) for r in self.runs],
            "limits": [lim.to_dict() for lim in self.limits], "caveats": self.caveats,
            "rule": "bands are ranges (the previous band's end, this band's end]; choice: the cheapest run whose "
                    "every tested length in the band clears the bar (95% confidence: exact bounds, or the adaptive "
                    "walk's always-valid tests); no: a length in the band confidently fails; untested: the band "
                    "reaches past the run's tested lengths or holds none of them; maybe: otherwise",
        }


def _run_dict(r: RunFacts, table: dict[str, Price]) -> dict[str, Any]:
    cost, how = r.cost()
    fams = {}
    for f, facts in r.families.items():
        iv = facts.interval
        fams[f] = {"bar": facts.bar, "line": iv.line(), "lo": iv.lo, "hi": iv.hi, "point": iv.point,
                   "settle": {str(k): v.to_dict() for k, v in sorted(iv.settle.items())},
                   "length_unit": facts.length_unit,
                   "content": {u: {"lo": facts.value(iv.lo, u) if iv.lo is not None else None,
                                   "hi": facts.value(iv.hi, u, high=True) if iv.hi is not None else None}
                               for u in UNITS},
                   "input_price_per_1m": {str(L): input_price(r.model, table, prompt_tokens=L)
                                          for L in iv.lengths} if facts.length_unit == "tokens" else {}}
    return {"run_id": r.run.run_id, "model": r.model, "tokenizer": r.run.tokenizer, "adaptive": r.adaptive,
            "input_price_per_1m": r.price.input if r.price else None, "cost_usd": cost, "cost_basis": how,
            "prompt_tokens": r.totals.prompt_tokens, "advertised_window": r.window, "families": fams,
            **({"natural_vs_synthetic": [a.to_dict() for a in r.natural]} if r.natural else {})}


def _weakness(ff: FamilyFacts, unit: str) -> tuple[float, ...]:
    """How weak a family is for a use, lowest first: its reliable length (the interval's
    lower end; -1 below the shortest length) in ``unit``, then the interval's upper end,
    then the mean over its tested lengths of the accuracy's upper and lower confidence
    bounds (two families unreliable everywhere are told apart by how far below the bar
    their answers are)."""
    iv = ff.interval
    lo = ff.value(iv.lo, unit) if iv.lo is not None else None
    hi = ff.value(iv.hi, unit, high=iv.hi != iv.lo) if iv.hi is not None else None
    tested = ff.tested() or [0]
    upper = sum(iv.upper_bounds.get(L, 1.0) for L in tested) / len(tested)
    lower = sum(iv.lower_bounds.get(L, 0.0) for L in tested) / len(tested)
    return (-1 if lo is None else lo, -1 if hi is None else hi, upper, lower)


def use_limit(run: RunFacts, use: list[str], unit: str) -> Limit:
    name = "+".join(use)
    facts = [run.families[f] for f in use if f in run.families]
    if len(facts) < len(use):
        return Limit(run.run.run_id, run.model, name, None, None, None, unit, run.window, {})
    keys = {ff.family: _weakness(ff, unit) for ff in facts}
    least = min(keys.values())
    weakest_all = [ff for ff in facts if keys[ff.family] == least]  # equally weak: all named
    weakest = weakest_all[0]
    iv = weakest.interval
    lo = weakest.value(iv.lo, unit) if iv.lo is not None else None
    his = [(ff.value(ff.interval.hi, unit, high=ff.interval.hi != ff.interval.lo) if ff.interval.hi is not None
            else None) for ff in facts]
    hi = None if any(h is None for h in his) else min(h for h in his if h is not None)
    # In content units the limit is what every family of the use holds at its own
    # reliable length: the fewest over the families, not the token-weakest one's.
    content: dict[str, int | None] = {}
    if lo is not None:
        for u in UNITS:
            values = [ff.value(ff.interval.lo, u) for ff in facts if ff.interval.lo is not None]
            if u != unit and values and all(v is not None for v in values):
                content[u] = min(v for v in values if v is not None)
    # no limit: what would show each family that holds it back reliable at its shortest length
    settles = tuple((ff.family, s) for ff in facts if lo is None and ff.interval.lo is None and ff.interval.lengths
                    and (s := ff.interval.settle.get(min(ff.interval.lengths))) is not None)
    return Limit(run.run.run_id, run.model, name, " and ".join(ff.family for ff in weakest_all), lo, hi, unit,
                 run.window, content, tuple(ff.family for ff in weakest_all), settles)


def decide(run_ids: list[str], store_path: str | Path = "ctxprobe.sqlite", *, bands: list[int] | None = None,
           bars: Mapping[str, Bar] | None = None, threshold: float | None = None, use: list[str] | None = None,
           unit: str = "tokens", prices: str | Path | None = None, layout: str | None = None) -> Decision:
    """Which model to use for which need: see :mod:`ctxprobe.decide.choose` for the rule.

    ``bands``: the needs' upper ends in ``unit`` (default: every tested length);
    ``use``: families a product needs together (its limit is the weakest one's);
    ``layout``: only the families sent in that message layout (:mod:`ctxprobe.decide.layout`)."""
    if unit not in UNITS:
        raise CtxprobeError(f"unknown unit '{unit}': use one of {', '.join(UNITS)}")
    if not run_ids:
        raise CtxprobeError("decide needs at least one run id (`ctxprobe runs` lists them)")
    table = load_prices(prices)
    runs = [load_run(r, store_path, table, threshold=threshold, bars=bars) for r in run_ids]
    if layout is None:
        return decide_runs(runs, table, bands=bands, use=use, unit=unit)
    from ctxprobe.decide.layout import in_layout

    kept = [in_layout(r, layout) for r in runs]
    decision = decide_runs([r for r, _ in kept], table, bands=bands, use=use, unit=unit)
    return replace(decision, layout=layout, layout_labels={r.run.run_id: labels for r, labels in kept})


def decide_runs(runs: list[RunFacts], table: dict[str, Price] | None = None, *, bands: list[int] | None = None,
                use: list[str] | None = None, unit: str = "tokens") -> Decision:
    """:func:`decide` on runs already read (:func:`ctxprobe.decide.runs.load_run`)."""
    table = table if table is not None else load_prices(None)
    families = sorted({f for r in runs for f in r.families})
    uses = [list(dict.fromkeys(use))] if use else []
    unknown = sorted({f for u in uses for f in u} - set(families))
    if unknown:
        raise CtxprobeError(f"--use names {', '.join(unknown)}, measured in none of the runs "
                            f"(their families: {', '.join(families) or 'none'})")
    if bands is None:  # every tested length, in the unit asked (content: the fewest its cases held)
        found = {f.value(L, unit) for r in runs for f in r.families.values() for L in f.tested()}
        bands = sorted(v for v in found if v) or [1]
    bands = sorted(set(bands))
    choices = choose(runs, families, uses, bands, unit, table)
    limits = [use_limit(r, u, unit) for u in (uses or [[f] for f in families]) for r in runs]
    notes = caveats(runs, families, unit) + price_age_notes([r.model for r in runs], table)
    return Decision(runs, unit, bands, choices, limits, notes, uses, table)
