"""An adaptive decision: send cases model by model and band by band, only while they can
still change a choice (``ctxprobe decide --run MODEL... --bands ... --adaptive``).

The bands are the lengths, and a band (the previous end, this end] is decided at its own
end (:mod:`ctxprobe.decide.choose`). Each model has its own run (the spec with its model,
the bands as lengths), recorded like ``run --adaptive`` so ``report`` and ``decide`` read
it by the walk's always-valid tests (the same levels, K = the number of bands). Band by
band, ascending, the models still in the race are tried in price order (cheapest first,
at the band's price):

* the model gets repetitions at the band's length, as the walk grows its frontier, until
  the length passes (it is the band's choice: no dearer model gets a case there), fails
  (it gets nothing longer, ever: it is out of the race), or its budget is spent (the band
  is "maybe" for it, and the next model is tried);
* a length below the band is never sent for it: a band's need starts where the previous
  one ends.

The runs are then read back by :func:`ctxprobe.decide.decide`, so the choices are what
their 95% statements support; a model never sent anything is named in the caveats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from ctxprobe.analysis.bootstrap import ThresholdRule
from ctxprobe.analysis.sequential import levels, next_reps
from ctxprobe.decide import Decision, decide
from ctxprobe.prices.table import input_price, load_prices
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import Spec, make_spec
from ctxprobe.sweep.adaptive import (AdaptivePlan, AdaptiveResult, Settings, _affordable, _evaluate, _record,
                                     _rep_means, _StoreSource, coarse_depths, default_budget)
from ctxprobe.sweep.run import run_id_for

__all__ = ["AdaptiveDecision", "adaptive_decision"]


@dataclass
class AdaptiveDecision:
    decision: Decision
    tokens: dict[str, int] = field(default_factory=dict)  # model -> prompt tokens sent
    runs: dict[str, str] = field(default_factory=dict)  # model -> run id (models that were sent cases)

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())


class _Walk:
    """One model's walk, let as far as a ceiling at a time."""

    def __init__(self, spec: Spec, store: Path, settings: Settings, rule: ThresholdRule, budget: int,
                 console: Console | None) -> None:
        self.spec, self.settings, self.rule, self.budget = spec, settings, rule, budget
        self.plan = AdaptivePlan(list(spec.families), list(spec.lengths), coarse_depths(spec.depths, 3),
                                 settings.coarse_reps)
        self.run_id = run_id_for(spec)
        self.source = _StoreSource(spec, store, self.run_id, False, console)
        self.pass_level, self.fail_level = levels(settings.alpha, len(spec.lengths), 0)
        self.started = False
        family = next(iter(self.plan.reps))
        self.plan.reps[family] = dict.fromkeys(self.plan.reps[family], 0)  # only the bands tried get cases

    def _state(self, length: int) -> tuple[str, list[float]]:
        rows = self.source.rows()
        decisions, _, _ = _evaluate(self.plan, rows, self.rule, self.pass_level, self.fail_level)
        (d,) = decisions
        state = next(s.state for s in d.lengths if s.length == length)
        return state, _rep_means(self.plan, rows, d.family)[length]

    def test(self, length: int) -> str:
        """Repetitions at ``length`` until it passes or fails (or the budget is spent): its state."""
        self.started = True
        family = next(iter(self.plan.reps))
        for _ in range(self.settings.max_rounds):
            have = self.plan.reps[family][length]
            state, means = self._state(length)
            if state in ("pass", "fail"):
                return state
            target = next_reps(means, have, len(self.plan.depths), self._threshold(), self.pass_level,
                               self.fail_level, first=self.settings.coarse_reps, cap=self.settings.max_reps,
                               growth=self.settings.growth)
            if target <= have and have:
                return "open"  # at the cap
            self.plan.reps[family][length] = max(target, have)
            todo, trimmed = _affordable(self.plan, self.source, self.budget)
            if todo:
                self.source.send(todo)
            if trimmed:
                return self._state(length)[0]
        return "open"

    def _threshold(self) -> float:
        rows = self.source.rows()
        decisions, _, _ = _evaluate(self.plan, rows, self.rule, self.pass_level, self.fail_level)
        return decisions[0].threshold or 0.0

    def record(self, store: Path, confidence: float) -> int:
        """Note the walk on its run (as ``run --adaptive`` does); the prompt tokens it sent."""
        rows = [r for r in self.source.rows() if self.plan.contains(r)]
        decisions, _, _ = _evaluate(self.plan, self.source.rows(), self.rule, self.pass_level, self.fail_level)
        result = AdaptiveResult(self.run_id, store, all(d.decided for d in decisions), "decision", 0, len(rows),
                                sum(r.token_count for r in rows), self.budget, confidence, self.plan.depths,
                                decisions, len(self.spec.lengths))
        _record(result, self.plan)
        return result.tokens_spent


def adaptive_decision(models: list[str], bands: list[int], store_path: str | Path = "ctxprobe.sqlite", *,
                      spec: Mapping[str, Any] | None = None, prices: str | Path | None = None,
                      confidence: float = 0.95, token_budget: int | None = None,
                      console: Console | None = None) -> AdaptiveDecision:
    """See the module doc. ``spec``: the sweep's other keys (one family; depths, seed...);
    ``token_budget``: per model (default: its 5-depth x 20-rep grid's tokens)."""
    if not models:
        raise CtxprobeError("decide --adaptive needs at least one --run MODEL")
    if not bands:
        raise CtxprobeError("decide --adaptive needs --bands: the lengths to decide at")
    store = Path(store_path)
    base = dict(spec or {})
    specs = {m: make_spec({**base, "model": m, "lengths": sorted(set(bands))}) for m in models}
    families = {f for s in specs.values() for f in s.families}
    if len(families) != 1:
        raise CtxprobeError(f"decide --adaptive decides one family at a time (got {', '.join(sorted(families))})")
    (family,) = families
    table = load_prices(prices)
    settings = Settings(confidence=confidence)
    walks: dict[str, _Walk] = {}

    def walk(model: str) -> _Walk:
        if model not in walks:
            s = specs[model]
            bar = s.bars.get(family)
            rule = ThresholdRule.from_bar(bar) if bar is not None else ThresholdRule("absolute", s.threshold)
            walks[model] = _Walk(s, store, settings, rule,
                                 token_budget if token_budget is not None else default_budget(s), console)
        return walks[model]

    out_of_race: set[str] = set()  # models that confidently failed a band: nothing longer
    for band in sorted(set(bands)):
        def price(m: str, band: int = band) -> tuple[bool, float, str]:
            p = input_price(specs[m].model, table, prompt_tokens=band)
            return p is None, p or 0.0, m

        for model in sorted((m for m in models if m not in out_of_race), key=price):
            state = walk(model).test(band)
            if state == "pass":
                break  # the band's choice: no dearer model gets a case for it
            if state == "fail":
                out_of_race.add(model)
    tokens = {m: w.record(store, confidence) for m, w in walks.items() if w.started}
    run_ids = {m: walks[m].run_id for m in tokens}
    decision = decide([run_ids[m] for m in models if m in run_ids], store, bands=sorted(set(bands)), prices=prices)
    never = [m for m in models if m not in run_ids]
    if never:
        decision.caveats.append(f"never sent a case: {', '.join(never)} (a cheaper model met every band first)")
    return AdaptiveDecision(decision, tokens, run_ids)
