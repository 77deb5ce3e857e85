"""Analysing a loaded run: :class:`~ctxprobe.report.rundata.RunData` (rows) into a
:class:`~ctxprobe.report.runreport.Report` (profiles, intervals, floors, budgets, notes).
Reads nothing from the store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ctxprobe.cases.fitting import too_short_line
from ctxprobe.analysis.distractors import distractor_tolerance
from ctxprobe.report.rag_confirmed import stored_confirmation_line
from ctxprobe.analysis.diagnose import output_truncated_notes, profile_notes, trained_context_notes
from ctxprobe.analysis.intervals import run_intervals
from ctxprobe.analysis.floor import floors
from ctxprobe.analysis.grid import profile
from ctxprobe.analysis.turns_back import turns_back_reach
from ctxprobe.analysis.reasoning import (base_family, budget_notes, budget_stats, cut_while_thinking, has_budgets,
                                         split_by_budget)
from ctxprobe.core.outcome import Outcome
from ctxprobe.core.runmeta import Preflight
from ctxprobe.report.format import length_unit
from ctxprobe.report.hooks import family_hooks
from ctxprobe.report.overlap import overlap_lines
from ctxprobe.report.position import position_report
from ctxprobe.report.rundata import Billing, RunData
from ctxprobe.report.runreport import Report
from ctxprobe.spec.threshold import Bar, check_threshold
from ctxprobe.store import RunRecord


def analyse_run(data: RunData, threshold: float | None = None, bars: Mapping[str, Bar] | None = None) -> Report:
    """The run's profiles at ``threshold`` (default: the run's own bar; ``bars`` per family
    over the run's own), with its notes."""
    if threshold is not None:
        check_threshold(threshold)
    run = data.run
    bar = threshold if threshold is not None else float(run.spec.get("threshold", 0.856))
    rows = split_by_budget(data.rows) if has_budgets(data.rows) else data.rows  # one curve per budget: FAMILY@thinkB
    units = {f: length_unit(run.spec, base_family(f)) for f in {r.family for r in rows} | set(run.spec.get("families", {}))}
    # one voice: an adaptive run's intervals are the walk's always-valid verdicts
    thresholds, intervals = run_intervals(rows, run.spec, run.meta, threshold=bar, bars=bars, units=units)
    profiles = [replace(p, verdicts=intervals[p.family].states or None) if p.family in intervals else p
                for p in profile(rows, bar, thresholds)]
    preflight = run.meta.preflight or Preflight()
    notes = [n for p in profiles for n in trained_context_notes(p, run.meta.served_trained_context,
                                                                preflight.context_window,
                                                                preflight.unscaled_extension)]
    lengths = [int(n) for n in run.spec.get("lengths") or []]
    notes += [too_short_line(label, int(need), lengths) for label, need in (run.spec.get("too_short") or {}).items()]
    key = notes + list(preflight.warnings)  # the notes that change a reading: the default report's
    notes += profile_notes(profiles) + preflight.warnings
    over_n, over_max = data.overcounts
    if over_n:
        key.append(f"{over_n} response{'s' if over_n != 1 else ''} reported more prompt tokens than built (up to "
                     f"+{over_max}): the server's template or tokenizer differs from the one counted — with an "
                     "answer prefix, the server may have closed that turn instead of continuing it")
        notes.append(key[-1])
    # answers cut off while thinking have a note of their own (the budget's, below)
    answer_cuts = profile([r for r in rows if not cut_while_thinking(r)], bar) if any(
        cut_while_thinking(r) for r in rows) else profiles
    if any(c.outcomes.get(Outcome.OUTPUT_TRUNCATED) for p in answer_cuts for c in p.cells):
        needs, fixed = data.answer_needs, _fixed_budgets(run)
        cuts = output_truncated_notes(answer_cuts, (run.spec.get("decoding") or {}).get("max_tokens"),
                                        {p.family: needs[base_family(p.family)] for p in answer_cuts
                                         if base_family(p.family) in needs},
                                        {p.family: fixed[base_family(p.family)] for p in answer_cuts
                                         if base_family(p.family) in fixed})
        notes += cuts
        key += cuts
    long_cuts = long_output_notes(data.rows, run)
    notes += long_cuts
    key += long_cuts
    cached, cached_n, cached_of = data.cache
    if cached_n and cached_of:
        notes.append(f"prefix cache: {cached:,} of {cached_of:,} prompt tokens ({cached / cached_of:.1%}) were reused "
                     f"from the model's prefix cache, not computed, as {cached_n} responses reported "
                     f"(filler {run.meta.prefix_sharing or 'shared'} across depths)")
    budgets = budget_stats(data.rows, profiles, bar) if has_budgets(data.rows) else []
    said_of_budgets = budget_notes(budgets)  # answers cut while thinking, a budget the server ignored
    notes += said_of_budgets
    key += said_of_budgets
    position, position_notes = position_report(rows, units, adaptive=run.meta.adaptive is not None)
    tolerance = distractor_tolerance(rows, run.spec.get("families") or {}, intervals, thresholds, bar=bar)
    tolerance_lines = [f"distractor tolerance: {t.line()}" for t in tolerance]
    confirmed = [f"retrieval setting {stored_confirmation_line(r)}" for r in data.rag_confirmed]
    reach = turns_back_reach(data.turns_back, {p.family: p.threshold for p in profiles})
    reach_lines = [f"turns back: {r.line()}" for r in reach]
    # the measured tolerance, a stored confirmation and a layout's reach (runs in turns/tools
    # layouts only) are answers of their own: said on the default screen
    key += tolerance_lines + confirmed + reach_lines
    notes += tolerance_lines + confirmed + reach_lines + position_notes + overlap_lines(data.overlap) + data.variant_notes
    if (cost_note := planned_vs_billed(run.meta.planned_cost, data.billing)) is not None:
        notes.append(cost_note)
    headlines = {name: found for name, rescored in data.rescored.items()
                 if (found := family_hooks(name).headline(rescored, run)) is not None}
    kinds = data.floor_kinds
    found = floors(rows, data.floor_rows, {p.family: p.effective_length for p in profiles}, kinds)
    if run.spec.get("baseline") and (without := sorted({p.family for p in profiles} - set(kinds))):
        notes.append(f"no noise floor for {', '.join(without)}: the family has none (--baseline applies to the others)")
    at = {p.family: p.threshold for p in profiles}  # a family's own measure against the bar: at the report's
    extras = {name: family_hooks(name).at_bars(extra, at) for name, extra in data.family_extras.items()}
    return Report(run, profiles, bar, notes, intervals, data.scorer, headlines, extras, floors=found,
                  floor_profiles=profile(data.floor_rows, bar) if found else [], budgets=budgets, position=position,
                  overlap=data.overlap, variants=data.variants, turns_back=data.turns_back,
                  turns_back_reach=reach, key_notes=key, distractors=tolerance, rag_confirmed=data.rag_confirmed)


def planned_vs_billed(planned: dict[str, Any] | None, billing: Billing) -> str | None:
    """"cost: billed $… for N responses (…); planned $… for the whole grid …", or None
    when the run has no price plan (free or unpriced models) and nothing was billed."""
    if planned is None or not billing.responses:
        return None
    costs = planned.get("costs") or {}
    mode = str(planned.get("mode", "cached"))

    def usd(x: object) -> str:
        return f"${x:,.4f}" if isinstance(x, (int, float)) else "unknown"

    def shown(m: str) -> str:  # a batch price genai-prices lacks is ctxprobe's estimate: said so
        estimate = m == "batch" and planned.get("batch_basis") == "estimate" and costs.get(m) is not None
        return usd(costs.get(m)) + (" (ctxprobe's estimate)" if estimate else "")

    others = ", ".join(f"{m.replace('-', ' ')} {shown(m)}" for m in ("on-demand", "cached", "batch") if m != mode)
    return (f"cost: billed {usd(billing.usd)} for {billing.responses} responses ({billing.prompt:,} prompt tokens: "
            f"{billing.read:,} read from the prompt cache, {billing.written:,} written to it); planned "
            f"{shown(mode)} for the whole grid at the {mode.replace('-', ' ')} price ({others}; list prices "
            f"of {planned.get('as_of', '?')})")


def long_output_notes(rows: list[Any], run: RunRecord) -> list[str]:
    """One line per family of long answers (``long_output``: ``longout``) whose replies the
    output limit cut: left out of accuracy, so the reader must know, and the limit the
    family itself would set for these answers (the longest with headroom)."""
    from ctxprobe.core import registry
    from ctxprobe.spec import default_output_limit

    out = []
    max_tokens = (run.spec.get("decoding") or {}).get("max_tokens")
    for label, params in (run.spec.get("families") or {}).items():
        name = str((params or {}).get("family", label))
        entry = registry.find("families", name)
        if entry is None or not getattr(entry.load(), "long_output", False):
            continue
        mine = [r for r in rows if base_family(r.family) == label]
        cut = sum(r.outcome == Outcome.OUTPUT_TRUNCATED and r.score is None for r in mine)
        if cut:
            limit = f"--max-tokens {max_tokens}" if max_tokens else "the output limit"
            out.append(f"{label}: {cut} of {len(mine)} answers were cut off by {limit} before they ended "
                       "(output_truncated: left out of accuracy, never scored as misses); sized for these answers "
                       f"the limit would be --max-tokens {default_output_limit(name, dict(params or {}))}")
    return out


def _fixed_budgets(run: RunRecord) -> dict[str, int]:
    """Labels of families that fix their own output budget (RULER's ``tokens_to_generate``)
    → that budget, as the family says (:func:`ctxprobe.plan.grid.family_output_budget`)."""
    from ctxprobe.plan.grid import family_output_budget

    out = {}
    for label, params in run.spec.get("families", {}).items():
        fixed = family_output_budget(str((params or {}).get("family", label)), params or {})
        if fixed is not None:
            out[label] = int(fixed)
    return out
