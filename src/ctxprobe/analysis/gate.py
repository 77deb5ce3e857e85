"""The regression gate: fail a run when some cell is significantly *and* materially worse
than its baseline (``ctxprobe check``), and say when the slice could not have shown a drop
of ``--max-drop`` at all (INCONCLUSIVE). The statistics are :mod:`ctxprobe.analysis.compare`'s;
what they can see, :mod:`ctxprobe.analysis.gate_power`'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxprobe.analysis.compare import CellComparison, Comparison, RunCases, compare_cases, pair_runs
from ctxprobe.analysis.compare_samples import case_value
from ctxprobe.analysis.gate_power import FamilyPower, best_p, family_power, group_cells, reps_to_see
from ctxprobe.errors import CtxprobeError

#: ``ctxprobe check``'s exit codes (documented in --help and docs/ci-regression-gate.md).
EXIT_PASS, EXIT_FAIL, EXIT_INCONCLUSIVE = 0, 1, 4

_FULL_CREDIT = 1.0 - 1e-9
#: A mean drop counts as more than ``--max-drop`` only past this slack: 9 of 180 lost is
#: 1 - 0.95 = 0.050000000000000044 in floating point, a drop *of* 0.05, not above it (the
#: power figures count whole pairs the same way: gate_power.material_lost).
_DROP_SLACK = 1e-9


@dataclass(frozen=True)
class CheckResult:
    """Outcome of the regression gate: ``passed`` False means a regression was found;
    ``blind`` names the families where no regression was found but none of ``max_drop``
    could have been (the verdict is then INCONCLUSIVE)."""

    passed: bool
    run_id: str
    baseline_id: str
    max_drop: float
    alpha: float
    responsible: list[CellComparison]
    comparison: Comparison
    power: list[FamilyPower] = field(default_factory=list)
    allow_inconclusive: bool = False

    @property
    def blind(self) -> list[str]:
        return [p.family for p in self.power if not p.sees(self.max_drop)]

    @property
    def status(self) -> str:
        if not self.passed:
            return "FAIL"
        return "INCONCLUSIVE" if self.blind else "PASS"

    @property
    def exit_code(self) -> int:
        if self.status == "FAIL":
            return EXIT_FAIL
        if self.status == "INCONCLUSIVE" and not self.allow_inconclusive:
            return EXIT_INCONCLUSIVE
        return EXIT_PASS

    def lines(self) -> list[str]:
        c = self.comparison
        head = (f"{self.status}: run {self.run_id} vs baseline {self.baseline_id} on "
                f"{c.n_paired} paired cases (max drop {self.max_drop:g}, Holm alpha {self.alpha:g})")
        if self.status == "INCONCLUSIVE":
            head += (f": no significant drop found, but {', '.join(self.blind)} could not have shown a drop of "
                     f"{self.max_drop:g}" + (" (passed: --allow-inconclusive)" if self.allow_inconclusive else ""))
        out = [head]
        for t in self.responsible:
            out.append(f"  {t.label}: {t.mean_a:.2f} -> {t.mean_b:.2f} (drop {-(t.diff or 0.0):.2f}; "
                       f"{t.a_only} {t.unit} lost, {t.b_only} gained; p_holm={t.p_adjusted:.2g})")
        out.extend(self.power_lines())
        out.append(c.verdict(within=self.max_drop if self.passed else None))  # a tolerated drop reads as one
        if c.n_excluded or c.only_a or c.only_b:
            out.append(f"note: {c.n_excluded} shared cases not measured on both sides; "
                       f"{c.only_b} cases only in the baseline, {c.only_a} only in the run (not paired)")
        return out

    def power_lines(self) -> list[str]:
        """What the slice could see, per family, and what would make a blind family see."""
        if not self.power:
            return []
        m = self.comparison.n_tests
        first = next((p.needed for p in self.power if not p.signflip and p.needed is not None), None)
        out = [f"power: {m} tests in Holm's family" + (
            f"; a test is significant for sure once {first} pairs are lost and none gained "
            f"(p = {best_p(first):.2g} < {self.alpha:g}/{m})" if first is not None else "")]
        for p in self.power:
            out.append(f"  {p.line()}")
            if p.family in self.blind and not p.signflip:
                reps = reps_to_see(p.n_cells, p.needed, self.max_drop)
                more = (f"--reps {reps} per cell ({p.n_cells} cells, baseline all right)" if reps is not None
                        else "fewer tests (families, lengths, depths) or a larger --max-drop")
                out.append(f"    to see every drop above {self.max_drop:g} here: {more}; "
                           "`ctxprobe check --plan` sizes a slice")
        return out


def check_cases(run: RunCases, baseline: RunCases, *, max_drop: float = 0.05, alpha: float = 0.05,
                allow_inconclusive: bool = False, **kwargs: Any) -> CheckResult:
    """The gate: fail when some test (a cell, a length's depths pooled, or a family pooled)
    is significantly worse than the baseline after Holm correction *and* its mean dropped by
    more than ``max_drop``; INCONCLUSIVE when nothing failed but some family could not have
    shown a drop of ``max_drop`` (:meth:`FamilyPower.sees`).

    Both conditions are needed: significance alone flags a real but harmless 1-point drop
    on a large slice; the drop alone flags noise on a small one. "Worse" means more pairs
    lost than gained; the p-value is McNemar's two-sided one (a conservative one-sided test
    at alpha/2), so a gate never fails a run for being better.
    """
    if not 0.0 <= max_drop <= 1.0:
        raise CtxprobeError(f"--max-drop must be between 0 and 1, got {max_drop:g}")
    comparison = compare_cases(baseline, run, alpha=alpha, **kwargs)
    responsible = [t for t in comparison.significant_cells()
                   if t.b_worse and t.diff is not None and -t.diff > max_drop + _DROP_SLACK]
    return CheckResult(not responsible, run.run_id, baseline.run_id, max_drop, alpha, responsible, comparison,
                       gate_power(comparison, baseline, run), allow_inconclusive)


def gate_power(comparison: Comparison, baseline: RunCases, run: RunCases) -> list[FamilyPower]:
    """Per family of ``comparison`` (baseline as A): what its tests could have flagged."""
    signflip = {f.family: f.pooled.by_needle or f.pooled.by_samples for f in comparison.families}
    pairs = pair_runs(baseline, run)[0]

    def right(p: Any) -> bool:  # whether the baseline holds something this pair could lose
        if signflip.get(p.family):
            return case_value(p.a_samples, p.a) > 0 if p.a_samples else p.a > 0
        return bool(p.a >= _FULL_CREDIT)

    grouped = group_cells((p.family, p.length, p.depth, right(p)) for p in pairs)
    return [family_power(f, grouped[f], comparison.n_tests, comparison.alpha, signflip[f])
            for f in sorted(grouped)]
