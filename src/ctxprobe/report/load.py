"""Reading a stored run back: profiles for the report and JSON for CI (exports: report/export.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxprobe.analysis.efflength import EffectiveLength, effective_lengths
from ctxprobe.analysis.diagnose import (answer_tokens_needed, output_truncated_notes, profile_notes,
                                        trained_context_notes)
from ctxprobe.analysis.floor import Floor, floors
from ctxprobe.analysis.grid import Profile, profile
from ctxprobe.analysis.overlap import OverlapStat, overlap_stats
from ctxprobe.analysis.position import PositionBias
from ctxprobe.analysis.reasoning import (BudgetStat, base_family, budget_notes, budget_stats, cut_while_thinking,
                                         has_budgets, split_by_budget)
from ctxprobe.core.rows import ResultRow
from ctxprobe.analysis.ruler import RulerHeadline, ruler_headline
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.format import length_unit
from ctxprobe.report.floor_rows import computed_floor_rows, floor_kinds, is_baseline, split_rows
from ctxprobe.report.jsonreport import profile_to_dict, profiles_to_dict
from ctxprobe.report.overlap import overlap_lines
from ctxprobe.report.position import position_report
from ctxprobe.report.variants import variant_report
from ctxprobe.core.variant import SEP
from ctxprobe.store import RunRecord, Store, open_existing
from ctxprobe.tasks.layout import stored_layout_line
from ctxprobe.spec.threshold import check_threshold
from ctxprobe.core.case_meta import case_meta
from ctxprobe.core.outcome import Outcome


@dataclass(frozen=True)
class Report:
    run: RunRecord
    profiles: list[Profile]
    threshold: float
    notes: list[str]
    #: Effective length with its guaranteed-coverage interval, per family (same order as profiles).
    intervals: dict[str, EffectiveLength]
    scorer: str = "strict"
    #: RULER's headline (RULER's scorer), for runs of RULER's tasks; None otherwise.
    ruler: RulerHeadline | None = None
    #: Phone-book metrics of both variants (``report/jsonreport.phonebook_to_dict``), if any.
    phonebook: dict[str, Any] | None = None
    #: The noise floor per family (``--baseline no-context``): empty when the run has none.
    floors: dict[str, Floor] = field(default_factory=dict)
    #: The floors' own profiles (labels ``FAMILY@no-context``), never among ``profiles``.
    floor_profiles: list[Profile] = field(default_factory=list)
    #: Per (family, reasoning budget): accuracy, effective length, cut-offs, reasoning
    #: tokens billed; empty for runs without the budget axis (profiles are then per budget).
    budgets: list[BudgetStat] = field(default_factory=list)
    #: Per family: the middle depths' deficit against the edges per length, and its growth.
    position: list[PositionBias] = field(default_factory=list)
    #: Per family that records it: lexical overlap of question and evidence, flagged if leaky.
    overlap: list[OverlapStat] = field(default_factory=list)
    #: Each prompt variant against its family's reference, paired by content (JSON).
    variants: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        run = self.run
        extra = {"ruler_headline": self.ruler.to_dict()} if self.ruler is not None else {}
        return extra | profiles_to_dict(
            self.profiles,
            run_id=run.run_id, model=run.model, tokenizer=run.tokenizer, status=run.status,
            ctxprobe_version=run.ctxprobe_version, created_at=run.created_at,
            cases=run.n_cases, responses=run.n_responses, spec=run.spec,
            chat_template_hash=run.meta.get("chat_template_hash"),
            trained_context=run.meta.get("trained_context"),
            notes=[*self.incomplete, *self.notes], preflight=run.meta.get("preflight"), scorer=self.scorer,
            prefix_sharing=run.meta.get("prefix_sharing"),
        ) | {"effective_length_intervals": {f: iv.to_dict() for f, iv in self.intervals.items()},
               "incomplete": self.incomplete, "prompt_layout": stored_layout_line(run.spec),
               "length_units": {p.family: length_unit(run.spec, p.family) for p in self.profiles},
               "planned_cases": run.n_planned, "answered_cases": run.n_final,
               **({"phonebook": self.phonebook} if self.phonebook is not None else {}),
               **({"noise_floors": {f: fl.to_dict() for f, fl in self.floors.items()},
                   "floor_profiles": [profile_to_dict(p) for p in self.floor_profiles]} if self.floors else {}),
               **({"reasoning_budgets": [s.to_dict() for s in self.budgets]} if self.budgets else {}),
               "position_bias": [b.to_dict() for b in self.position],
               "overlap": [o.to_dict() for o in self.overlap],
               **({"variants": self.variants} if self.variants else {})}

    @property
    def incomplete(self) -> list[str]:
        """Why the run's numbers are not the whole picture (empty when they are)."""
        out = []
        labels = {iv.label(L): L for iv in self.intervals.values() for L in iv.truncated}
        if labels:
            out.append("incomplete: prompts truncated by the server at "
                       + ", ".join(sorted(labels, key=labels.__getitem__))
                       + " (not measured; the effective length stops below)")
        return out


@dataclass(frozen=True)
class Completeness:
    """Whether a run's results can be trusted as a whole: harness failures left behind."""

    run_id: str
    status: str
    planned: int
    final: int  # cases with a final (non-`error`) response
    errors: int  # cases whose last attempt ended in `error` (retried by the next run)
    input_truncated: int  # cases the server silently cut (its prompt-token count fell short)
    unsent: int = 0  # planned cases with no stored response at all (a spending cap stopped the run)

    @property
    def harness_incomplete(self) -> bool:
        """`error` cases remain or prompts were truncated: harness failures, not the model's."""
        return self.errors > 0 or self.input_truncated > 0

    @property
    def incomplete(self) -> bool:
        """Harness failures remain or planned cases were never sent: the run exits 3."""
        return self.harness_incomplete or self.unsent > 0

    def line(self) -> str:
        parts = []
        if self.errors:
            parts.append(f"{self.errors} case{'s' if self.errors != 1 else ''} ended in `error` after retries "
                         "(rerun the same command to retry them)")
        if self.input_truncated:
            parts.append(f"{self.input_truncated} prompt{'s were' if self.input_truncated != 1 else ' was'} "
                         "truncated by the server (`input_truncated`: raise its context length or drop those lengths)")
        if self.unsent:
            parts.append(f"{self.unsent} of {self.planned} planned case{'s were' if self.planned != 1 else ' was'} "
                         "never sent (a spending cap stopped the run: raise --max-cost and rerun the same command)")
        return f"run {self.run_id} incomplete: " + "; ".join(parts)


def run_completeness(run_id: str, store_path: str | Path) -> Completeness:
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        counts = store.outcome_counts(run.run_id)
    return Completeness(run.run_id, run.status, run.n_planned, run.n_final, counts.get(Outcome.ERROR, 0),
                        counts.get(Outcome.INPUT_TRUNCATED, 0), max(0, run.n_planned - sum(counts.values())))


def load_report(run_id: str, store_path: str | Path = "ctxprobe.sqlite", threshold: float | None = None,
                scorer: str = "strict") -> Report:
    """A stored run's profiles. ``scorer="ruler"`` re-scores the stored outputs with RULER's
    string_match_all (string_match_part for documents/QA), so numbers can be set beside
    published RULER tables; harness failures stay excluded either way."""
    if scorer not in ("strict", "ruler"):
        raise CtxprobeError(f"unknown scorer '{scorer}': use strict (default) or ruler")
    if threshold is not None:
        check_threshold(threshold)
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        bar = threshold if threshold is not None else float(run.spec.get("threshold", 0.856))
        ruler_tasks = _ruler_task_labels(run)
        ruler_rows = _ruler_rows(store, run) if scorer == "ruler" or ruler_tasks else None
        rows = store.result_rows(run.run_id) if scorer == "strict" else ruler_rows or []  # ruler: never None
        cached, cached_n, cached_of = store.cache_totals(run.run_id)
        billing = store.billing(run.run_id)
        over_n, over_max = store.prompt_overcounts(run.run_id)
        books = _phonebook_dict(store, run) if any(r.family == "phonebook" for r in rows) else None
        leaks = overlap_stats((r for r in store.iter_case_records(run.run_id) if not is_baseline(r["family"])),
                              family_names(run))
        variants, variant_notes = (variant_report(store.iter_case_records(run.run_id), list(run.spec["families"]))
                                   if any(SEP in label for label in run.spec.get("families") or {}) else ([], []))
        kinds = floor_kinds(run.spec)
        rows, floor_rows = split_rows(rows)
        if "random-instance" in kinds.values():
            floor_rows += list(computed_floor_rows(store.iter_case_records(run.run_id), kinds))
    stored_rows = rows
    if has_budgets(rows):  # one curve per reasoning budget: FAMILY@thinkB
        rows = split_by_budget(rows)
    profiles = profile(rows, bar)
    units = {f: length_unit(run.spec, base_family(f)) for f in {r.family for r in rows} | set(run.spec.get("families", {}))}
    intervals = {iv.family: iv for iv in effective_lengths(rows, threshold=bar, units=units)}
    preflight = run.meta.get("preflight") or {}
    unscaled = bool(preflight.get("unscaled_extension"))
    notes = [n for p in profiles for n in trained_context_notes(p, trained_context(run), preflight.get("context_window"),
                                                                unscaled)] + profile_notes(profiles)
    notes += list((run.meta.get("preflight") or {}).get("warnings") or [])
    if over_n:
        notes.append(f"{over_n} response{'s' if over_n != 1 else ''} reported more prompt tokens than built (up to "
                     f"+{over_max}): the server's template or tokenizer differs from the one counted — with an "
                     "answer prefix, the server may have closed that turn instead of continuing it")
    # answers cut off while thinking have a note of their own (the budget's, below)
    answer_cuts = profile([r for r in rows if not cut_while_thinking(r)], bar) if any(
        cut_while_thinking(r) for r in rows) else profiles
    if any(c.outcomes.get(Outcome.OUTPUT_TRUNCATED) for p in answer_cuts for c in p.cells):
        needs = _answer_needs(store_path, run)
        fixed = _fixed_budgets(run)
        notes += output_truncated_notes(answer_cuts, (run.spec.get("decoding") or {}).get("max_tokens"),
                                        {p.family: needs[base_family(p.family)] for p in answer_cuts
                                         if base_family(p.family) in needs},
                                        {p.family: fixed[base_family(p.family)] for p in answer_cuts
                                         if base_family(p.family) in fixed})
    if cached_n and cached_of:
        notes.append(f"prefix cache: {cached:,} of {cached_of:,} prompt tokens ({cached / cached_of:.1%}) were reused "
                     f"from the model's prefix cache, not computed, as {cached_n} responses reported "
                     f"(filler {run.meta.get('prefix_sharing', 'shared')} across depths)")
    budgets = budget_stats(stored_rows, profiles, bar) if has_budgets(stored_rows) else []
    notes += budget_notes(budgets)
    position, position_notes = position_report(rows, units)
    notes += position_notes + overlap_lines(leaks) + variant_notes
    if (cost_note := planned_vs_billed(run.meta.get("planned_cost"), billing)) is not None:
        notes.append(cost_note)
    headline = ruler_headline(ruler_rows or [], ruler_tasks) if ruler_tasks else None
    found = floors(rows, floor_rows, {p.family: p.effective_length for p in profiles}, kinds)
    if run.spec.get("baseline") and (without := sorted({p.family for p in profiles} - set(kinds))):
        notes.append(f"no noise floor for {', '.join(without)}: the family has none (--baseline applies to the others)")
    return Report(run, profiles, bar, notes, intervals, scorer, headline, books, floors=found,
                  floor_profiles=profile(floor_rows, bar) if found else [], budgets=budgets, position=position,
                  overlap=leaks, variants=variants)


def planned_vs_billed(planned: Any, billing: tuple[float, int, int, int, int]) -> str | None:
    """"cost: billed $… for N responses (…); planned $… for the whole grid …", or None
    when the run has no price plan (free or unpriced models) and nothing was billed."""
    billed, prompt, read, written, n = billing
    if not isinstance(planned, dict) or not n:
        return None
    costs = planned.get("costs") or {}
    mode = str(planned.get("mode", "cached"))

    def usd(x: object) -> str:
        return f"${x:,.4f}" if isinstance(x, (int, float)) else "unknown"

    others = ", ".join(f"{m.replace('-', ' ')} {usd(costs.get(m))}" for m in ("on-demand", "cached", "batch")
                       if m != mode)
    return (f"cost: billed {usd(billed)} for {n} responses ({prompt:,} prompt tokens: {read:,} read from the prompt "
            f"cache, {written:,} written to it); planned {usd(costs.get(mode))} for the whole grid at the "
            f"{mode.replace('-', ' ')} price ({others}; list prices of {planned.get('as_of', '?')})")


def _phonebook_dict(store: Store, run: RunRecord) -> dict[str, Any] | None:
    from ctxprobe.analysis.phonebook import analyse, needle_results
    from ctxprobe.report.jsonreport import phonebook_to_dict

    results = needle_results(store.iter_case_records(run.run_id))
    return phonebook_to_dict(analyse(results)) if results else None


def _answer_needs(store_path: str | Path, run: RunRecord) -> dict[str, int]:
    """Per family, the output tokens its longest correct answer needs (from the stored answers)."""
    needs: dict[str, int] = {}
    with open_existing(store_path) as store:
        for r in store.iter_case_records(run.run_id):
            expected = [str(x) for x in (r.get("expected") or [])]
            needs[r["family"]] = max(needs.get(r["family"], 0), answer_tokens_needed(expected))
    return needs


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


def family_names(run: RunRecord) -> dict[str, str]:
    """Family label → family name (a label is the family's name unless its parameters say ``family: NAME``)."""
    return {label: str((params or {}).get("family", label)) for label, params in run.spec.get("families", {}).items()}


def _ruler_task_labels(run: RunRecord) -> list[str]:
    """RULER's task names among the run's family labels (a ``--preset ruler`` run), in
    RULER's order; empty for other runs."""
    from ctxprobe.tasks.ruler import TASKS

    names = family_names(run)
    if not any(family == "ruler" for family in names.values()):
        return []
    return list(TASKS)


def _ruler_rows(store: Store, run: RunRecord) -> list[ResultRow]:
    from ctxprobe.tasks.ruler import case_metric, match

    labels = family_names(run)
    rows = []
    for r in store.iter_case_records(run.run_id):
        if r["outcome"] is None:
            continue
        refs = [*r["expected"], *case_meta(r["meta"]).get("aliases", [])]
        metric = case_metric(labels.get(r["family"], r["family"]), r["meta"])
        score = None if r["score"] is None else match(metric, r["output"] or "", refs)
        rows.append(ResultRow(r["family"], r["length"], r["depth"], r["rep"], r["outcome"], score, r["token_count"],
                              r.get("reasoning_budget"), r.get("reasoning_tokens")))
    return rows


def trained_context(run: RunRecord) -> int | None:
    """The model's trained context: from its tokenizer files, else what the server reports."""
    if run.meta.get("trained_context"):
        return int(run.meta["trained_context"])
    endpoint = (run.meta.get("preflight") or {}).get("endpoint") or {}
    meta = m if isinstance(m := endpoint.get("meta"), dict) else {}
    value = meta.get("n_ctx_train") or endpoint.get("n_ctx_train")
    return int(value) if value else None


def write_plots(report: Report, out_dir: str | Path) -> list[Path]:
    from ctxprobe.report.plots import curve_png, heatmap_png

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CtxprobeError(f"cannot create report directory {out}: {err.strerror}") from None
    paths: list[Path] = []
    title = f"{report.run.model} · run {report.run.run_id} · scorer {report.scorer}"
    tag = "" if report.scorer == "strict" else f"-scorer-{report.scorer}"  # never overwrite the strict plots
    if len(report.profiles) > 1:
        from ctxprobe.report.plots_multi import all_families_png

        paths.append(all_families_png(report.profiles, out / f"all-families-curve{tag}.png", title))
    for prof in report.profiles:
        # the trained window is in tokens: not marked on an axis of book sizes in entries
        trained = trained_context(report.run) if length_unit(report.run.spec, prof.family) == "tokens" else None
        paths.append(heatmap_png(prof, out / f"{prof.family}-heatmap{tag}.png", title, trained))
        paths.append(curve_png(prof, out / f"{prof.family}-curve{tag}.png", title, trained))
    return paths
