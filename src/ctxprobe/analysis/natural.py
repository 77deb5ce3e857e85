"""Synthetic vs natural: does accuracy on the user's own documents fall where the synthetic
grid put the cliff?

Natural families are those whose cases are the user's own (``documents``, and published
natural sets imported as ``documents`` cases); every other family is synthetic. For each
synthetic family and each length measured by both, the natural and the synthetic accuracy
(all depths pooled, Wilson 95% intervals, as in the profile) are compared with a two-sided
two-proportion z-test (pooled variance; scores summed as successes, so partial credit
counts as its share). The rule:

- a length *differs* when its p-value is below ``alpha / k`` (0.05 by default, Bonferroni
  over the k common lengths, so a grid of many lengths does not cry wolf);
- natural and synthetic *agree* when no common length differs. Their effective lengths
  (the profile's walk at the run's threshold) are shown beside the verdict; a difference
  in effective length alone, with no length whose accuracies differ, is within noise.

A length with no scored case on either side is left out of the test and listed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxprobe.analysis.grid import LengthStat, Profile
from ctxprobe.spec.units import fmt_tokens

NATURAL_FAMILIES: frozenset[str] = frozenset({"documents"})
DEFAULT_ALPHA = 0.05


def two_proportion_p(s1: float, n1: int, s2: float, n2: int) -> float:
    """Two-sided p-value of the pooled two-proportion z-test (1.0 when undefined:
    either side empty, or both proportions 0 or both 1)."""
    if n1 <= 0 or n2 <= 0:
        return 1.0
    p1, p2 = s1 / n1, s2 / n2
    pooled = (s1 + s2) / (n1 + n2)
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if var <= 0:
        return 1.0
    z = abs(p1 - p2) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2))


@dataclass(frozen=True)
class LengthComparison:
    length: int
    natural_n: int
    natural_mean: float | None
    natural_lo: float
    natural_hi: float
    synthetic_n: int
    synthetic_mean: float | None
    synthetic_lo: float
    synthetic_hi: float
    p_value: float | None  # None: not tested (a side has no scored case)
    differs: bool


@dataclass
class FamilyAgreement:
    natural: str
    synthetic: str
    natural_effective_length: int | None
    synthetic_effective_length: int | None
    alpha: float
    lengths: list[LengthComparison] = field(default_factory=list)
    untested: list[int] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not any(c.differs for c in self.lengths)

    def verdict(self) -> str:
        """"agree: no length differs (…)", or "disagree: natural lower at 2K; natural higher
        at 8K (…)" (each differing length with its direction), the one wording of every report."""
        if not self.lengths:
            return "no common measured length"
        rule = f"(two-proportion test, Bonferroni alpha {self.alpha:g} over {len(self.lengths)} lengths)"
        if self.agree:
            return f"agree: no length differs {rule}"
        parts = []
        for word, below in (("lower", True), ("higher", False)):
            side = [c.length for c in self.lengths
                    if c.differs and ((c.natural_mean or 0.0) < (c.synthetic_mean or 0.0)) == below]
            if side:
                parts.append(f"natural {word} at {', '.join(fmt_tokens(L) for L in side)}")
        return f"disagree: {'; '.join(parts)} {rule}"

    def to_dict(self) -> dict[str, Any]:
        return {"natural": self.natural, "synthetic": self.synthetic, "agree": self.agree and bool(self.lengths),
                "verdict": self.verdict(), "natural_effective_length": self.natural_effective_length,
                "synthetic_effective_length": self.synthetic_effective_length, "alpha": self.alpha,
                "rule": "two-sided pooled two-proportion z-test per length, Bonferroni over common lengths; "
                        "agree when no length differs",
                "lengths": [asdict(c) for c in self.lengths], "untested_lengths": self.untested}


def _compare(nat: LengthStat, syn: LengthStat, threshold_p: float) -> LengthComparison:
    tested = nat.n > 0 and syn.n > 0 and nat.mean is not None and syn.mean is not None
    p = two_proportion_p((nat.mean or 0.0) * nat.n, nat.n, (syn.mean or 0.0) * syn.n, syn.n) if tested else None
    return LengthComparison(nat.length, nat.n, nat.mean, nat.lo, nat.hi, syn.n, syn.mean, syn.lo, syn.hi,
                            None if p is None else round(p, 6), p is not None and p < threshold_p)


def agreement(natural: Profile, synthetic: Profile, alpha: float = DEFAULT_ALPHA) -> FamilyAgreement:
    """One natural profile against one synthetic profile (module docstring)."""
    nat = {s.length: s for s in natural.lengths}
    syn = {s.length: s for s in synthetic.lengths}
    common = sorted(set(nat) & set(syn))
    testable = [L for L in common if nat[L].n > 0 and syn[L].n > 0]
    out = FamilyAgreement(natural.family, synthetic.family, natural.effective_length,
                          synthetic.effective_length, alpha)
    k = max(1, len(testable))
    out.lengths = [_compare(nat[L], syn[L], alpha / k) for L in testable]
    out.untested = [L for L in common if L not in testable]
    return out


def natural_vs_synthetic(profiles: list[Profile], alpha: float = DEFAULT_ALPHA) -> list[FamilyAgreement]:
    """Every natural profile against every synthetic one (empty when either is missing)."""
    natural = [p for p in profiles if p.family in NATURAL_FAMILIES]
    synthetic = [p for p in profiles if p.family not in NATURAL_FAMILIES]
    return [agreement(n, s, alpha) for n in natural for s in synthetic]
