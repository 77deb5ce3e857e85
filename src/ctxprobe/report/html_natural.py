"""The report section "Synthetic vs natural" (registered in ``report_sections``): per
length, natural accuracy beside each synthetic family's, with intervals and the
agreement test of :mod:`ctxprobe.analysis.natural`, over every run on the page (a natural
run and a synthetic run of the same model can be shown together)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxprobe.analysis.natural import NATURAL_FAMILIES, natural_vs_synthetic
from ctxprobe.report.format import fmt_tokens
from ctxprobe.report.html_parts import ReportSection, Table


def _acc(mean: float | None, lo: float, hi: float, n: int) -> str:
    return "—" if mean is None else f"{mean:.2f} [{lo:.2f}, {hi:.2f}] n={n}"


def natural_section(views: Sequence[Any]) -> ReportSection | None:
    profiles = [p for v in views for p in v.profiles]
    labels = {id(p): v.label for v in views for p in v.profiles}
    if not any(p.family in NATURAL_FAMILIES for p in profiles):
        return None
    found = natural_vs_synthetic(profiles)
    if not found:
        return None
    rows = []
    verdicts = []
    for a in found:
        syn = next(p for p in profiles if p.family == a.synthetic)
        verdicts.append(f"{a.natural} vs {a.synthetic} ({labels.get(id(syn), '')}): {a.verdict()}; effective "
                        f"length {fmt_tokens(a.natural_effective_length) if a.natural_effective_length else 'none'}"
                        f" vs {fmt_tokens(a.synthetic_effective_length) if a.synthetic_effective_length else 'none'}")
        for c in a.lengths:
            rows.append([a.synthetic, fmt_tokens(c.length), _acc(c.natural_mean, c.natural_lo, c.natural_hi, c.natural_n),
                         _acc(c.synthetic_mean, c.synthetic_lo, c.synthetic_hi, c.synthetic_n),
                         "—" if c.p_value is None else f"{c.p_value:.3g}", "differs" if c.differs else "same"])
    table = Table(["synthetic", "length", "natural", "synthetic acc.", "p", "test"], rows)
    return ReportSection("Synthetic vs natural", [table], text=" | ".join(verdicts))
