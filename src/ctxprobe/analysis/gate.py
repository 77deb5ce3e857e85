"""The regression gate: fail a run when some cell is significantly *and* materially worse
than its baseline (``ctxprobe check``). The statistics are :mod:`ctxprobe.analysis.compare`'s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxprobe.analysis.compare import CellComparison, Comparison, RunCases, compare_cases
from ctxprobe.errors import CtxprobeError


@dataclass(frozen=True)
class CheckResult:
    """Outcome of the regression gate: ``passed`` False means exit non-zero."""

    passed: bool
    run_id: str
    baseline_id: str
    max_drop: float
    alpha: float
    responsible: list[CellComparison]
    comparison: Comparison

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def lines(self) -> list[str]:
        c = self.comparison
        head = (f"{'PASS' if self.passed else 'FAIL'}: run {self.run_id} vs baseline {self.baseline_id} on "
                f"{c.n_paired} paired cases (max drop {self.max_drop:g}, Holm alpha {self.alpha:g})")
        out = [head]
        for t in self.responsible:
            out.append(f"  {t.label}: {t.mean_a:.2f} -> {t.mean_b:.2f} (drop {-(t.diff or 0.0):.2f}; "
                       f"{t.a_only} {t.unit} lost, {t.b_only} gained; p_holm={t.p_adjusted:.2g})")
        out.append(c.verdict())
        if c.n_excluded or c.only_a or c.only_b:
            out.append(f"note: {c.n_excluded} shared cases not measured on both sides; "
                       f"{c.only_b} cases only in the baseline, {c.only_a} only in the run (not paired)")
        return out


def check_cases(run: RunCases, baseline: RunCases, *, max_drop: float = 0.05, alpha: float = 0.05,
                **kwargs: Any) -> CheckResult:
    """The gate: fail when some cell (or a family pooled) is significantly worse than the
    baseline after Holm correction *and* its mean dropped by more than ``max_drop``.

    Both conditions are needed: significance alone flags a real but harmless 1-point drop
    on a large slice; the drop alone flags noise on a small one. "Worse" means more pairs
    lost than gained; the p-value is McNemar's two-sided one (a conservative one-sided test
    at alpha/2), so a gate never fails a run for being better.
    """
    if not 0.0 <= max_drop <= 1.0:
        raise CtxprobeError(f"--max-drop must be between 0 and 1, got {max_drop:g}")
    comparison = compare_cases(baseline, run, alpha=alpha, **kwargs)
    responsible = [t for t in comparison.significant_cells()
                   if t.b_worse and t.diff is not None and -t.diff > max_drop]
    return CheckResult(not responsible, run.run_id, baseline.run_id, max_drop, alpha, responsible, comparison)
