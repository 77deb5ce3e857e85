"""Reading a stored run back: profiles for the report, JSON for CI, JSONL export."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ctxprobe.analysis.bootstrap import EffectiveLengthInterval, ThresholdRule, bootstrap_effective_length
from ctxprobe.analysis.diagnose import profile_notes, trained_context_notes
from ctxprobe.analysis.grid import Profile, profile
from ctxprobe.analysis.rows import ResultRow
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.jsonreport import profiles_to_dict
from ctxprobe.store import RunRecord, Store


@dataclass(frozen=True)
class Report:
    run: RunRecord
    profiles: list[Profile]
    threshold: float
    notes: list[str]
    #: Effective length with a bootstrap interval, per family (same order as profiles).
    intervals: dict[str, EffectiveLengthInterval]
    scorer: str = "strict"

    def to_dict(self) -> dict[str, Any]:
        run = self.run
        return profiles_to_dict(
            self.profiles,
            run_id=run.run_id, model=run.model, tokenizer=run.tokenizer, status=run.status,
            ctxprobe_version=run.ctxprobe_version, created_at=run.created_at,
            cases=run.n_cases, responses=run.n_responses, spec=run.spec,
            chat_template_hash=run.meta.get("chat_template_hash"),
            trained_context=run.meta.get("trained_context"),
            notes=self.notes, preflight=run.meta.get("preflight"), scorer=self.scorer,
            prefix_sharing=run.meta.get("prefix_sharing"),
        ) | {"effective_length_intervals": {f: _interval_dict(iv) for f, iv in self.intervals.items()},
             "planned_cases": run.n_planned, "answered_cases": run.n_final}


@dataclass(frozen=True)
class Completeness:
    """Whether a run's results can be trusted as a whole: harness failures left behind."""

    run_id: str
    status: str
    planned: int
    final: int  # cases with a final (non-`error`) response
    errors: int  # cases whose last attempt ended in `error` (retried by the next run)
    input_truncated: int  # cases the server silently cut (its prompt-token count fell short)

    @property
    def harness_incomplete(self) -> bool:
        """`error` cases remain or prompts were truncated: the run is incomplete (exit code 3)."""
        return self.errors > 0 or self.input_truncated > 0

    def line(self) -> str:
        parts = []
        if self.errors:
            parts.append(f"{self.errors} case{'s' if self.errors != 1 else ''} ended in `error` after retries "
                         "(rerun the same command to retry them)")
        if self.input_truncated:
            parts.append(f"{self.input_truncated} prompt{'s were' if self.input_truncated != 1 else ' was'} "
                         "truncated by the server (`input_truncated`: raise its context length or drop those lengths)")
        return f"run {self.run_id} incomplete: " + "; ".join(parts)


def run_completeness(run_id: str, store_path: str | Path) -> Completeness:
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        counts = store.outcome_counts(run.run_id)
    return Completeness(run.run_id, run.status, run.n_planned, run.n_final, counts.get("error", 0),
                        counts.get("input_truncated", 0))


def open_existing(store_path: str | Path) -> Store:
    """Read commands never create a store by accident."""
    p = Path(store_path)
    if not p.is_file():
        raise CtxprobeError(f"no store at {p}; run a sweep first or pass --store PATH")
    return Store(p)


def load_report(run_id: str, store_path: str | Path = "ctxprobe.sqlite", threshold: float | None = None,
                scorer: str = "strict") -> Report:
    """A stored run's profiles. ``scorer="ruler"`` re-scores the stored outputs with RULER's
    string_match_all (string_match_part for documents/QA), so numbers can be set beside
    published RULER tables; harness failures stay excluded either way."""
    if scorer not in ("strict", "ruler"):
        raise CtxprobeError(f"unknown scorer '{scorer}': use strict (default) or ruler")
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        bar = threshold if threshold is not None else float(run.spec.get("threshold", 0.856))
        rows = store.result_rows(run.run_id) if scorer == "strict" else _ruler_rows(store, run)
        cached, cached_n, cached_of = store.cache_totals(run.run_id)
    profiles = profile(rows, bar)
    intervals = {iv.family: iv for iv in bootstrap_effective_length(rows, rule=ThresholdRule("absolute", bar))}
    notes = [n for p in profiles for n in trained_context_notes(p, trained_context(run))] + profile_notes(profiles)
    notes += list((run.meta.get("preflight") or {}).get("warnings") or [])
    if cached_n and cached_of:
        notes.append(f"prefix cache: {cached:,} of {cached_of:,} prompt tokens ({cached / cached_of:.1%}) were reused "
                     f"from the model's prefix cache, not computed, as {cached_n} responses reported "
                     f"(filler {run.meta.get('prefix_sharing', 'shared')} across depths)")
    return Report(run, profiles, bar, notes, intervals, scorer)


def _interval_dict(iv: EffectiveLengthInterval) -> dict[str, Any]:
    return {
        "point": iv.point, "lo": iv.lo, "hi": iv.hi, "confidence": iv.confidence, "line": iv.line(),
        "rule": "mean >= threshold", "threshold": iv.threshold, "n_resamples": iv.n_resamples,
        "distribution": {("none" if k is None else str(k)): v for k, v in iv.distribution.items()},
        "p_clear": {str(k): v for k, v in iv.p_clear.items()},
    }


def _ruler_rows(store: Store, run: RunRecord) -> list[ResultRow]:
    from ctxprobe.tasks.ruler import string_match_all, string_match_part

    labels = {label: str((params or {}).get("family", label)) for label, params in run.spec.get("families", {}).items()}
    rows = []
    for r in store.iter_case_records(run.run_id):
        if r["outcome"] is None:
            continue
        refs = [*r["expected"], *r["meta"].get("aliases", [])]
        match = string_match_part if labels.get(r["family"], r["family"]) == "documents" else string_match_all
        score = None if r["score"] is None else match(r["output"] or "", refs)
        rows.append(ResultRow(r["family"], r["length"], r["depth"], r["rep"], r["outcome"], score, r["token_count"]))
    return rows


def trained_context(run: RunRecord) -> int | None:
    """The model's trained context: from its tokenizer files, else what the server reports."""
    if run.meta.get("trained_context"):
        return int(run.meta["trained_context"])
    endpoint = (run.meta.get("preflight") or {}).get("endpoint") or {}
    meta = endpoint.get("meta") if isinstance(endpoint.get("meta"), dict) else {}
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
    title = f"{report.run.model} · run {report.run.run_id}"
    if len(report.profiles) > 1:
        from ctxprobe.report.plots_multi import all_families_png

        paths.append(all_families_png(report.profiles, out / "all-families-curve.png", title))
    for prof in report.profiles:
        paths.append(heatmap_png(prof, out / f"{prof.family}-heatmap.png", title))
        paths.append(curve_png(prof, out / f"{prof.family}-curve.png", title))
    return paths


def iter_export(run_id: str, store_path: str | Path) -> Iterator[dict[str, Any]]:
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        for rec in store.iter_case_records(run.run_id):
            yield {"run_id": run.run_id, "model": run.model, "tokenizer": run.tokenizer, **rec}


def export_jsonl(run_id: str, store_path: str | Path, out: TextIO) -> int:
    """Every case with its result, one JSON line each. Each line is also an instance pack
    line (``ctxprobe run --cases FILE`` re-sends exactly these prompts elsewhere)."""
    from ctxprobe.report.export import pack_line
    from ctxprobe.report.redact import redact

    with open_existing(store_path) as store:
        run = store.require_run(run_id)
    n = 0
    for rec in iter_export(run.run_id, store_path):
        line = {**rec, "model": redact(rec["model"]), **pack_line(rec, run)}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        n += 1
    return n
