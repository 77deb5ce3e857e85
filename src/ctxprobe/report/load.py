"""Reading a stored run back: :func:`load_report` loads it (:mod:`ctxprobe.report.rundata`)
and analyses it (:mod:`ctxprobe.report.analyse`); :func:`run_completeness` says whether
harness failures were left. Exports: :mod:`ctxprobe.report.export`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxprobe.core.outcome import Outcome
from ctxprobe.report.analyse import analyse_run, planned_vs_billed
from ctxprobe.report.plots.write import write_plots
from ctxprobe.report.hooks import check_scorer
from ctxprobe.report.rundata import RunData, family_names, load_run
from ctxprobe.report.runreport import Completeness, Report
from ctxprobe.spec.threshold import Bar, check_threshold
from ctxprobe.store import open_existing

__all__ = ["Completeness", "Report", "RunData", "analyse_run", "family_names", "load_report", "load_run",
           "planned_vs_billed", "report_json", "run_completeness", "write_plots"]


def load_report(run_id: str, store_path: str | Path = "ctxprobe.sqlite", threshold: float | None = None,
                scorer: str = "strict", bars: Mapping[str, Bar] | None = None) -> Report:
    """A stored run's profiles. ``scorer=NAME`` re-scores the stored outputs with the family
    NAME's own scorer (its report hooks' ``rescore``: ``"ruler"``, RULER's string_match_all,
    string_match_part for documents/QA, so numbers can be set beside published RULER
    tables); harness failures stay excluded either way."""
    check_scorer(scorer)
    if threshold is not None:
        check_threshold(threshold)  # before the store is read: a bad bar is the user's one-line error
    return analyse_run(load_run(run_id, store_path, scorer), threshold, bars)


def report_json(run_ids: list[str], store_path: str | Path = "ctxprobe.sqlite", threshold: float | None = None,
                scorer: str = "strict", bars: Mapping[str, Bar] | None = None) -> dict[str, Any] | list[dict[str, Any]]:
    """What ``ctxprobe report RUN… --json`` prints: one run's :meth:`Report.to_dict`, or a
    list of them for several runs, a natural run's with ``natural_vs_synthetic_across_runs``:
    its natural profiles against the other runs' synthetic ones
    (:class:`ctxprobe.analysis.natural.CrossPair`, ``note`` saying when two models are compared)."""
    from ctxprobe.analysis.natural import RunCurves, across_runs

    reports = [load_report(run_id, store_path, threshold, scorer, bars) for run_id in run_ids]
    found = [r.to_dict() for r in reports]
    if len(found) == 1:
        return found[0]
    pairs = across_runs([RunCurves(r.run.run_id, r.run.model, r.profiles, family_names(r.run)) for r in reports])
    for r, entry in zip(reports, found):
        mine = [p.to_dict() for p in pairs if p.natural_run == r.run.run_id]
        if mine:
            entry["natural_vs_synthetic_across_runs"] = mine
    return found


def run_completeness(run_id: str, store_path: str | Path) -> Completeness:
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        counts = store.outcome_counts(run.run_id)
    return Completeness(run.run_id, run.status, run.n_planned, run.n_final, counts.get(Outcome.ERROR, 0),
                        counts.get(Outcome.INPUT_TRUNCATED, 0), max(0, run.n_planned - sum(counts.values())))
