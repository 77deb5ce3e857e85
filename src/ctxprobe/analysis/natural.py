"""Synthetic vs natural: does accuracy on the user's own documents fall where the synthetic
grid put the cliff?

A profile is natural when the registry family behind its label says so
(``FamilyBase.natural``: ``documents``, whose cases are the user's own, and the published
natural sets imported as ``documents`` cases), whatever the label is called (``mydocs``
with ``family: documents``, a variant ``documents~end``, a budget's curve
``documents@think1k``); every other profile is synthetic. Like is compared with like: a
natural profile is held against the synthetic profiles of the same prompt variant and the
same reasoning budget only (``documents~end@think1k`` against ``niah~end@think1k``).
For each such pair and each length measured by both, the natural and the synthetic accuracy
(all depths pooled, Wilson 95% intervals, as in the profile) are compared with a two-sided
two-proportion z-test (pooled variance; scores summed as successes, so partial credit
counts as its share). The rule:

- a length *differs* when its p-value is below ``alpha / k`` (0.05 by default, Bonferroni
  over the k common lengths, so a grid of many lengths does not cry wolf);
- natural and synthetic *agree* when no common length differs. Their effective lengths
  (the profile's walk at the run's threshold) are shown beside the verdict; a difference
  in effective length alone, with no length whose accuracies differ, is within noise.

A length with no scored case on either side is left out of the test and listed.

"Agree" is only as strong as the sample: with it the verdict gives the smallest difference
the test would see 80% of the time at the smallest common length's case counts
(:func:`detectable_difference`; at accuracies around 0.5, where it is largest), so that
"no length differs" over 6 cases per side reads as the weak statement it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxprobe.analysis.grid import LengthStat, Profile
from ctxprobe.analysis.reasoning import SEPARATOR as BUDGET_SEP
from ctxprobe.core import registry
from ctxprobe.core.variant import split_label
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.units import fmt_tokens

DEFAULT_ALPHA = 0.05


def spec_family_names(spec: Mapping[str, Any] | None) -> dict[str, str]:
    """Family label → the registry family behind it, from a (stored) spec's ``families``
    (a label is the family's name unless its parameters say ``family: NAME``)."""
    families = (spec or {}).get("families") or {}
    return {str(label): str((params or {}).get("family", label)) if isinstance(params, Mapping) else str(label)
            for label, params in families.items()}


@dataclass(frozen=True)
class Curve:
    """What a profile's label says: the registry family behind it, its prompt variant and
    its reasoning budget (as labelled: ``1k``), None where the label has none."""

    family: str
    variant: str | None
    budget: str | None

    @property
    def axis(self) -> tuple[str | None, str | None]:
        """What must match for two profiles to be compared: (variant, budget)."""
        return self.variant, self.budget


def read_label(label: str, names: Mapping[str, str] | None = None) -> Curve:
    """``documents~end@think1k`` → (documents, end, 1k); ``names`` maps the spec's labels
    (``mydocs``, ``mydocs~end``) to their family (:func:`spec_family_names`)."""
    rest, sep, budget = label.partition(BUDGET_SEP)
    base, variant = split_label(rest)
    names = names or {}
    return Curve(names.get(rest) or names.get(base) or base, variant, budget if sep else None)


def is_natural_family(name: str) -> bool:
    """Whether the registered family ``name`` is natural (``FamilyBase.natural``); an
    unknown family, or one that cannot be loaded here, counts as synthetic."""
    entry = registry.find("families", name)
    if entry is None:
        return False
    try:
        return bool(getattr(entry.load(), "natural", False))
    except CtxprobeError:
        return False


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


def detectable_difference(n1: int, n2: int, alpha: float, power: float = 0.8) -> float:
    """The accuracy difference the two-sided two-proportion test at level ``alpha`` detects
    with probability ``power`` between ``n1`` and ``n2`` cases, at accuracies around 0.5
    (the largest variance, so the largest such difference): (z(1 − alpha/2) + z(power)) ×
    sqrt(0.25 (1/n1 + 1/n2)), at most 1 (normal approximation; 1 for an empty side)."""
    from statistics import NormalDist

    if n1 <= 0 or n2 <= 0:
        return 1.0
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return min(1.0, z * math.sqrt(0.25 * (1 / n1 + 1 / n2)))


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
    #: Each side's shortest tested length: an effective length of None is below it.
    natural_shortest: int | None = None
    synthetic_shortest: int | None = None

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
            return (f"agree: no length differs {rule}; with {self.smallest_n} cases a side, a difference "
                    f"under about {self.detectable:.2f} can go unseen")
        parts = []
        for word, below in (("lower", True), ("higher", False)):
            side = [c.length for c in self.lengths
                    if c.differs and ((c.natural_mean or 0.0) < (c.synthetic_mean or 0.0)) == below]
            if side:
                parts.append(f"natural {word} at {', '.join(fmt_tokens(L) for L in side)}")
        return f"disagree: {'; '.join(parts)} {rule}"

    def effective_lengths(self) -> str:
        """``2K vs below 1K`` (natural vs synthetic): the one wording of both effective
        lengths in every report; a side no length of which clears the bar is below its
        shortest tested length, as compare words it."""
        def eff(value: int | None, shortest: int | None) -> str:
            if value:
                return fmt_tokens(value)
            return f"below {fmt_tokens(shortest)}" if shortest else "below the shortest tested length"

        return (f"{eff(self.natural_effective_length, self.natural_shortest)} vs "
                f"{eff(self.synthetic_effective_length, self.synthetic_shortest)}")

    @property
    def smallest_n(self) -> int:
        """The fewest cases on one side at a tested length (0 with none tested)."""
        tested = [min(c.natural_n, c.synthetic_n) for c in self.lengths if c.p_value is not None]
        return min(tested) if tested else 0

    @property
    def detectable(self) -> float:
        """The largest difference, over the tested lengths, that the Bonferroni test sees
        with 80% power (:func:`detectable_difference`)."""
        k = max(1, len(self.lengths))
        return max((detectable_difference(c.natural_n, c.synthetic_n, self.alpha / k)
                    for c in self.lengths if c.p_value is not None), default=1.0)

    def to_dict(self) -> dict[str, Any]:
        return {"natural": self.natural, "synthetic": self.synthetic, "agree": self.agree and bool(self.lengths),
                "detectable_difference": round(self.detectable, 4),
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
                          synthetic.effective_length, alpha, natural_shortest=min(nat, default=None),
                          synthetic_shortest=min(syn, default=None))
    k = max(1, len(testable))
    out.lengths = [_compare(nat[L], syn[L], alpha / k) for L in testable]
    out.untested = [L for L in common if L not in testable]
    return out


Read = tuple[Profile, Curve]


def split_natural(profiles: Sequence[Profile], names: Mapping[str, str] | None = None) -> tuple[list[Read], list[Read]]:
    """(natural, synthetic) profiles, each with its label read (module docstring)."""
    read = [(p, read_label(p.family, names)) for p in profiles]
    natural = [(p, c) for p, c in read if is_natural_family(c.family)]
    return natural, [(p, c) for p, c in read if not is_natural_family(c.family)]


def pairs(natural: Sequence[Read], synthetic: Sequence[Read], alpha: float = DEFAULT_ALPHA) -> list[FamilyAgreement]:
    """Each natural profile against each synthetic one of the same variant and budget."""
    return [agreement(n, s, alpha) for n, nc in natural for s, sc in synthetic if nc.axis == sc.axis]


def natural_vs_synthetic(profiles: Sequence[Profile], alpha: float = DEFAULT_ALPHA, *,
                         names: Mapping[str, str] | None = None) -> list[FamilyAgreement]:
    """Every natural profile against every synthetic one of the same variant and budget
    (empty when either is missing); ``names``: the run's labels → families
    (:func:`spec_family_names`; without it a label is read as its family's name)."""
    return pairs(*split_natural(profiles, names), alpha=alpha)


@dataclass(frozen=True)
class RunCurves:
    """One run's profiles as the cross-run comparison reads them."""

    run_id: str
    model: str
    profiles: Sequence[Profile]
    names: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CrossPair:
    """A natural profile of one run against a synthetic profile of another."""

    agreement: FamilyAgreement
    natural_run: str
    natural_model: str
    synthetic_run: str
    synthetic_model: str

    @property
    def same_model(self) -> bool:
        return self.natural_model == self.synthetic_model

    def note(self) -> str | None:
        """The caution every report prints for a pair across two models (None for one model)."""
        if self.same_model:
            return None
        return (f"note: {self.natural_run} is a run of {self.natural_model}, {self.synthetic_run} of "
                f"{self.synthetic_model}: this compares two models")

    def to_dict(self) -> dict[str, Any]:
        return {**self.agreement.to_dict(), "natural_run": self.natural_run, "natural_model": self.natural_model,
                "synthetic_run": self.synthetic_run, "synthetic_model": self.synthetic_model,
                "same_model": self.same_model, "note": self.note()}


def across_runs(runs: Sequence[RunCurves], alpha: float = DEFAULT_ALPHA) -> list[CrossPair]:
    """The pairs that span two of the runs (a natural run and a synthetic run of the same
    model, say), like with like; pairs within one run are that run's own."""
    found: list[CrossPair] = []
    for nat in runs:
        natural, _ = split_natural(nat.profiles, nat.names)
        if not natural:
            continue
        for syn in runs:
            if syn.run_id == nat.run_id:
                continue
            _, synthetic = split_natural(syn.profiles, syn.names)
            found += [CrossPair(a, nat.run_id, nat.model, syn.run_id, syn.model)
                      for a in pairs(natural, synthetic, alpha)]
    return found


def unpaired(runs: Sequence[RunCurves]) -> list[str]:
    """One line per natural run whose curves found no synthetic curve of the same variant
    and budget in the other runs although those hold synthetic curves (nothing compared:
    a run without budgets beside one with them, say)."""
    out = []
    for nat in runs:
        natural, _ = split_natural(nat.profiles, nat.names)
        others = [(p, c) for syn in runs if syn.run_id != nat.run_id for p, c in split_natural(syn.profiles,
                                                                                             syn.names)[1]]
        if natural and others and not pairs(natural, others):
            out.append(f"note: {', '.join(p.family for p, _ in natural)} ({nat.run_id}) not compared across runs: "
                       f"no other run holds a synthetic curve of the same prompt variant and reasoning budget "
                       f"(theirs: {', '.join(dict.fromkeys(p.family for p, _ in others))})")
    return out
