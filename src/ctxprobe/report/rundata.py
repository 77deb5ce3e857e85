"""Loading a stored run: the store read into typed rows and totals (:class:`RunData`),
nothing analysed. :mod:`ctxprobe.report.analyse` turns it into a :class:`Report`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxprobe.analysis.diagnose import answer_tokens_needed
from ctxprobe.analysis.natural import spec_family_names
from ctxprobe.analysis.overlap import OverlapStat, overlap_stats
from ctxprobe.analysis.turns_back import TurnsBackStat, turns_back_stats
from ctxprobe.core.case import sample_of_id
from ctxprobe.core.outcome import Outcome
from ctxprobe.core.rows import ResultRow
from ctxprobe.core.variant import SEP
from ctxprobe.report.floor.rows import computed_floor_rows, floor_kinds, is_baseline, split_rows
from ctxprobe.report.hooks import FamilyReportHooks, check_scorer, family_hooks
from ctxprobe.report.variants import variant_report
from ctxprobe.store import CaseRecord, RunRecord, Store, open_existing
from ctxprobe.store.confirmations import latest_confirmations



@dataclass(frozen=True)
class Billing:
    """What the run's responses billed: USD, prompt tokens, of them read from and written
    to the prompt cache, and how many responses were priced."""

    usd: float = 0.0
    prompt: int = 0
    read: int = 0
    written: int = 0
    responses: int = 0


@dataclass(frozen=True)
class RunData:
    """One stored run as rows: what the analysis reads, read once from the store."""

    run: RunRecord
    scorer: str
    #: The run's own scored rows (by ``scorer``), floor twins left out.
    rows: list[ResultRow]
    #: Rows of the noise floor (the no-context twins, and the computed random-instance ones).
    floor_rows: list[ResultRow] = field(default_factory=list)
    #: Family label → its floor kind (empty without ``--baseline``).
    floor_kinds: dict[str, str] = field(default_factory=dict)
    #: Family name → every scored case re-scored by that family's own scorer (its report
    #: hooks' ``rescore``: RULER's string match), for the run's families that have one and
    #: for ``scorer`` when it is not ``strict``.
    rescored: dict[str, list[ResultRow]] = field(default_factory=dict)
    #: (cached prompt tokens, responses reporting a cache figure, their prompt tokens).
    cache: tuple[int, int, int] = (0, 0, 0)
    billing: Billing = Billing()
    #: (responses whose server counted more prompt tokens than built, the largest excess).
    overcounts: tuple[int, int] = (0, 0)
    #: Per family label, the output tokens its longest correct answer needs (read only when
    #: some answer was cut at the output limit).
    answer_needs: dict[str, int] = field(default_factory=dict)
    #: What the families' report hooks add, by family name (JSON).
    family_extras: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Per family that records it: lexical overlap of question and evidence.
    overlap: list[OverlapStat] = field(default_factory=list)
    #: Each prompt variant against its family's reference, paired by content (JSON), and its notes.
    variants: list[dict[str, Any]] = field(default_factory=list)
    variant_notes: list[str] = field(default_factory=list)
    #: Accuracy by turns back, for cases built in a turns/tools layout (empty otherwise).
    turns_back: list[TurnsBackStat] = field(default_factory=list)
    #: The run's stored ``decide --rag --confirm`` results, the latest per setting.
    rag_confirmed: list[dict[str, Any]] = field(default_factory=list)


def load_run(run_id: str, store_path: str | Path = "ctxprobe.sqlite", scorer: str = "strict") -> RunData:
    """The store read for one run (a unique prefix of its id is enough): its case records
    are read once, each prompt dropped unless a family's report needs it (a computed
    floor, a family's JSON extra), plus the store's light totals."""
    check_scorer(scorer)
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        kinds = floor_kinds(run.spec)
        names = family_names(run)
        labels = sorted({str(label) for label in run.spec.get("families") or {}})
        hooks = {label: family_hooks(names.get(label, label)) for label in labels}
        records = _read_records(store, run, {label for label, k in kinds.items() if k == "random-instance"}
                                | {label for label, h in hooks.items() if h.json_reads_prompts})
        scorers = {n for n in {*names.values(), scorer} - {"strict"} if family_hooks(n).rescores}
        rescored = {n: _rescored_rows(records, run, family_hooks(n)) for n in sorted(scorers)}
        rows = store.result_rows(run.run_id) if scorer == "strict" else rescored[scorer]
        rows, floor_rows = split_rows(rows)
        if "random-instance" in kinds.values():
            floor_rows += list(computed_floor_rows(records, run.spec))
        extras = {}  # by family name, once a family: a family's extra covers all its labels (variants)
        for name in sorted({names.get(r.family, r.family) for r in rows}):
            extra = family_hooks(name).json_extra(records)
            if extra is not None:
                extras[name] = extra
        cut = any(r.outcome == Outcome.OUTPUT_TRUNCATED for r in rows)
        leaks = overlap_stats((r for r in records if not is_baseline(r.family)), names)
        variants, variant_notes = (variant_report(records, list(run.spec["families"]))
                                   if any(SEP in label for label in run.spec.get("families") or {}) else ([], []))
        return RunData(run, scorer, rows, floor_rows, kinds, rescored, store.cache_totals(run.run_id),
                       Billing(*store.billing(run.run_id)), store.prompt_overcounts(run.run_id),
                       _answer_needs(records) if cut else {}, extras, leaks, variants, variant_notes,
                       turns_back_stats(records), latest_confirmations(store.rag_confirmations(run.run_id)))


def _read_records(store: Store, run: RunRecord, keep_prompts: set[str]) -> list[CaseRecord]:
    """The run's case records in one read; prompts kept only for the labels in ``keep_prompts``."""
    return [r if r.family in keep_prompts else r.without_prompt() for r in store.iter_case_records(run.run_id)]


def _answer_needs(records: Iterable[CaseRecord]) -> dict[str, int]:
    """Per family, the output tokens its longest correct answer needs (from the stored answers)."""
    needs: dict[str, int] = {}
    for r in records:
        expected = [str(x) for x in (r.expected or [])]
        needs[r.family] = max(needs.get(r.family, 0), answer_tokens_needed(expected))
    return needs


def family_names(run: RunRecord) -> dict[str, str]:
    """Family label → family name (a label is the family's name unless its parameters say ``family: NAME``)."""
    return spec_family_names(run.spec)


def _rescored_rows(records: Iterable[CaseRecord], run: RunRecord, hooks: FamilyReportHooks) -> list[ResultRow]:
    """Every scored case of the run scored again by ``hooks.rescore`` (harness failures left out)."""
    labels = family_names(run)
    rows = []
    for r in records:
        if r.outcome is None:
            continue
        score = None if r.score is None else hooks.rescore(r, labels.get(r.family, r.family))
        rows.append(ResultRow(r.family, r.length, r.depth, r.rep, r.outcome, score, r.token_count,
                              r.reasoning_budget, r.reasoning_tokens if r.reasoning_budget is not None else None,
                              sample_of_id(r.case_id)))
    return rows
