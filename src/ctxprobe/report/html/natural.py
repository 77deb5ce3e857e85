"""The report section "Synthetic vs natural" (registered in ``report_sections``): per
length, natural accuracy beside each synthetic family's, with intervals and the
agreement test of :mod:`ctxprobe.analysis.natural`, like with like (each prompt variant
and reasoning budget on its own): within each run on the page, then across its runs (a
natural run and a synthetic run of the same model can be shown together; a pair across
two models says so, as the terminal and the JSON do)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxprobe.analysis.natural import (FamilyAgreement, RunCurves, across_runs, natural_vs_synthetic,
                                      spec_family_names, unpaired)
from ctxprobe.report.format import fmt_tokens
from ctxprobe.report.html.parts import ReportSection, Table
from ctxprobe.report.redact import redact


def _acc(mean: float | None, lo: float, hi: float, n: int) -> str:
    return "—" if mean is None else f"{mean:.2f} [{lo:.2f}, {hi:.2f}] n={n}"


def _rows(pair: str, a: FamilyAgreement) -> list[list[str]]:
    return [[pair, fmt_tokens(c.length), _acc(c.natural_mean, c.natural_lo, c.natural_hi, c.natural_n),
             _acc(c.synthetic_mean, c.synthetic_lo, c.synthetic_hi, c.synthetic_n),
             "—" if c.p_value is None else f"{c.p_value:.3g}", "differs" if c.differs else "same"]
            for c in a.lengths]


def _verdict(pair: str, a: FamilyAgreement) -> str:
    return f"{pair}: {a.verdict()}; effective length {a.effective_lengths()}"


def natural_section(views: Sequence[Any]) -> ReportSection | None:
    rows: list[list[str]] = []
    verdicts: list[str] = []
    runs = []
    for v in views:
        names = spec_family_names(v.report.run.spec)
        runs.append(RunCurves(v.report.run.run_id, redact(v.report.run.model), v.profiles, names))
        for a in natural_vs_synthetic(v.profiles, names=names):
            pair = f"{a.natural} vs {a.synthetic} ({v.label})"
            rows += _rows(pair, a)
            verdicts.append(_verdict(pair, a))
    for p in across_runs(runs):
        a = p.agreement
        pair = f"{a.natural} ({p.natural_run}) vs {a.synthetic} ({p.synthetic_run})"
        rows += _rows(pair, a)
        note = p.note()
        verdicts.append(_verdict(pair, a) + ("" if note is None else f" — {note}"))
    verdicts += unpaired(runs)
    if not verdicts:
        return None
    table = Table(["pair", "length", "natural", "synthetic", "p", "test"], rows)
    return ReportSection("Synthetic vs natural", [table] if rows else [], text=" | ".join(verdicts))
