"""The loaded run as the reports read it: :class:`Report` (profiles, intervals, notes...)
and :class:`Completeness` (what ``run`` exits 3 on). Types only: the store is read by
:mod:`ctxprobe.report.rundata`, the analysis is :mod:`ctxprobe.report.analyse`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxprobe.analysis.distractors import DistractorTolerance
from ctxprobe.analysis.efflength import EffectiveLength
from ctxprobe.analysis.floor import Floor
from ctxprobe.analysis.grid import Profile
from ctxprobe.analysis.overlap import OverlapStat
from ctxprobe.analysis.turns_back import TurnsBackReach, TurnsBackStat
from ctxprobe.analysis.position import PositionBias
from ctxprobe.analysis.reasoning import BudgetStat
from ctxprobe.report.format import length_unit
from ctxprobe.report.jsonreport import profile_to_dict, profiles_to_dict
from ctxprobe.store import RunRecord
from ctxprobe.haystack.layout import stored_layout_line


@dataclass(frozen=True)
class Report:
    run: RunRecord
    profiles: list[Profile]
    threshold: float
    notes: list[str]
    #: Effective length with its guaranteed-coverage interval, per family (same order as profiles).
    intervals: dict[str, EffectiveLength]
    scorer: str = "strict"
    #: Family name → its headline from its own scorer (report hooks' ``headline``: RULER's
    #: for runs of RULER's tasks); empty when no family of the run has one.
    headlines: dict[str, Any] = field(default_factory=dict)
    #: What a family's report hooks add, by family name, as JSON (the phone book's metrics
    #: of both variants: ``families/phonebook/report.phonebook_to_dict``); empty when none adds any.
    family_extras: dict[str, dict[str, Any]] = field(default_factory=dict)
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
    #: Of ``notes``, those that change how the profile reads (a window, a template mismatch,
    #: answers cut by the output limit): the default terminal report prints only these
    #: (with a significant position effect and a flagged overlap); never in the JSON.
    key_notes: list[str] = field(default_factory=list)
    #: Per family measured along the look-alike axis: how many it tolerates at the bar.
    distractors: list[DistractorTolerance] = field(default_factory=list)
    #: Accuracy by turns back (cases built in a turns/tools layout; absent from the JSON when none).
    turns_back: list[TurnsBackStat] = field(default_factory=list)
    #: The run's stored ``decide --rag --confirm`` results, the latest per setting (JSON
    #: ``rag_confirmations``, absent when none).
    rag_confirmed: list[dict[str, Any]] = field(default_factory=list)
    #: Per family label with turns-back data: how far back its accuracy still clears its bar.
    turns_back_reach: list[TurnsBackReach] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        run = self.run
        meta = run.meta
        extra = {f"{name}_headline": found.to_dict() for name, found in self.headlines.items()}
        return extra | profiles_to_dict(
            self.profiles,
            run_id=run.run_id, model=run.model, tokenizer=run.tokenizer, status=run.status,
            ctxprobe_version=run.ctxprobe_version, created_at=run.created_at,
            cases=run.n_cases, responses=run.n_responses, spec=run.spec,
            chat_template_hash=meta.chat_template_hash,
            trained_context=meta.trained_context,
            notes=[*self.incomplete, *self.notes],
            preflight=meta.preflight.to_json() if meta.preflight is not None else meta.extra.get("preflight"),
            scorer=self.scorer,
            prefix_sharing=meta.prefix_sharing,
        ) | {"effective_length_intervals": {f: iv.to_dict() for f, iv in self.intervals.items()},
               "incomplete": self.incomplete, "prompt_layout": stored_layout_line(run.spec),
               "length_units": {p.family: length_unit(run.spec, p.family) for p in self.profiles},
               "planned_cases": run.n_planned, "answered_cases": run.n_final,
               **self.family_extras,
               **({"noise_floors": {f: fl.to_dict() for f, fl in self.floors.items()},
                   "floor_profiles": [profile_to_dict(p) for p in self.floor_profiles]} if self.floors else {}),
               **({"reasoning_budgets": [s.to_dict() for s in self.budgets]} if self.budgets else {}),
               "position_bias": [b.to_dict() for b in self.position],
               "overlap": [o.to_dict() for o in self.overlap],
               **({"variants": self.variants} if self.variants else {}),
               **({"turns_back": [t.to_dict() for t in self.turns_back]} if self.turns_back else {}),
               **({"turns_back_reach": [r.to_dict() for r in self.turns_back_reach]} if self.turns_back_reach else {}),
               **({"distractor_tolerance": [t.to_dict() for t in self.distractors]} if self.distractors else {}),
               **({"rag_confirmations": [{k: v for k, v in r.items() if k != "scores"} for r in self.rag_confirmed]}
                  if self.rag_confirmed else {})}

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
