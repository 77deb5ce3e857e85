"""What the regression gate can see: the smallest drop its exact tests can flag with the
pairs a slice holds, whether that covers ``--max-drop``, and how many repetitions a slice
needs (``ctxprobe check --plan``).

Facts the numbers rest on:

- McNemar's exact p depends only on the discordant counts (b lost, c gained), not on how
  many pairs agree; with none gained it is ``2 / 2**b``. The sign-flip test of the phone
  book and of sampled cases gives ``2 / 2**d`` when d cases differ, all one way.
- Holm's first step is Bonferroni: *some* test is rejected only when the smallest p is
  below alpha / m (m: every test in the comparison, all families), and a test with
  p < alpha / m is always rejected. So ``needed`` -- the least b with m * 2 / 2**b < alpha
  -- is exact: a test that lost ``needed`` pairs and gained none is flagged whatever the
  other tests show; with fewer lost, nothing can be flagged unless some other test is
  already significant (Holm steps down then).
- A test's pairs can be lost only where the baseline got them right: a family's ``losable``
  pairs bound what any drop can show.
- Every test of a family sees a subset of the family's pairs, so the pooled family test
  has the most lost pairs: the family-wide figure is the smallest drop the gate can see.

The statements are checked by simulation of known truth in tests/integration/test_gate_power.py.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ctxprobe.analysis.compare_needles import smallest_p
from ctxprobe.analysis.exact_tests import mcnemar_exact

#: Beyond this many lost pairs a test is treated as out of reach (alpha / m below 2**-N).
_MAX_NEEDED = 10_000
_EPS = 1e-9


def best_p(lost: int, *, signflip: bool = False) -> float:
    """The p-value of a test whose ``lost`` pairs (cases) all went one way, none the other."""
    return smallest_p(lost) if signflip else mcnemar_exact(lost, 0)


def needed_lost(m_tests: int, alpha: float, *, signflip: bool = False) -> int | None:
    """The least number of pairs lost (none gained) that a test must show to be significant
    at Holm's first step over ``m_tests`` tests; None when no count can (sign-flip's Monte
    Carlo floor above alpha / m)."""
    if m_tests < 1:
        raise ValueError("m_tests must be >= 1")
    for d in range(1, _MAX_NEEDED + 1):
        p = best_p(d, signflip=signflip)
        if min(1.0, m_tests * p) < alpha:
            return d
        if signflip and d > 16 and p == best_p(d + 1, signflip=True):
            return None  # the Monte Carlo floor: more cases cannot lower p
    return None


def material_lost(max_drop: float, n_pairs: int) -> int:
    """The least number of pairs lost of ``n_pairs`` that is a drop of more than ``max_drop``."""
    return math.floor(max_drop * n_pairs + _EPS) + 1


@dataclass(frozen=True)
class FamilyPower:
    """What the gate could see in one family of a comparison."""

    family: str
    n_pairs: int
    losable: int  # pairs (cases) the baseline got right: the most any drop can lose
    n_cells: int
    cell_pairs: int  # pairs in the family's largest cell
    needed: int | None  # pairs lost, none gained, that a test needs to be significant
    m_tests: int
    alpha: float
    signflip: bool = False  # cases tested by the sign-flip test (phone book, sampled variants)

    @property
    def unit(self) -> str:
        return "cases" if self.signflip else "pairs"

    @property
    def smallest_drop(self) -> float | None:
        """The smallest family-wide drop (share of its pairs lost, none gained) the gate is sure
        to flag as significant; None: no drop of this family can be significant."""
        if self.needed is None or self.needed > self.losable:
            return None
        return self.needed / self.n_pairs

    @property
    def smallest_cell_drop(self) -> float | None:
        """The same for a drop confined to one cell (the largest); None: no cell alone can."""
        if self.needed is None or self.needed > min(self.cell_pairs, self.losable):
            return None
        return self.needed / self.cell_pairs

    def sees(self, max_drop: float) -> bool:
        """Whether every family-wide drop of more than ``max_drop`` would be significant (True
        also when no drop can exceed it). Sign-flip families: whether any such drop can be (a
        drop spread over ``needed`` cases, however small each, is)."""
        if self.needed is None:
            return False
        if self.signflip:
            return self.needed <= self.losable
        first = material_lost(max_drop, self.n_pairs)
        return first > self.losable or self.needed <= first

    def line(self) -> str:
        head = f"{self.family}: {self.n_pairs} {self.unit} in {self.n_cells} cells"
        if self.losable < self.n_pairs:
            head += f" ({self.losable} right in the baseline: only those can be lost)"
        drop, cell = self.smallest_drop, self.smallest_cell_drop
        if drop is None:
            need = f"{self.needed}" if self.needed is not None else "more"
            return f"{head}: no drop can be significant (a test needs {need} {self.unit} lost, none gained)"
        where = (f"{cell:.2f} in one cell ({self.needed} of {self.cell_pairs})" if cell is not None
                 else f"no cell alone (a cell holds at most {self.cell_pairs})")
        return (f"{head}: smallest detectable drop {drop:.3f} over the family ({self.needed} of {self.n_pairs} "
                f"{self.unit} lost, none gained), {where}")


def family_power(family: str, cells: dict[tuple[int, float], list[bool]], m_tests: int, alpha: float,
                 signflip: bool = False) -> FamilyPower:
    """``cells``: per (length, depth), whether the baseline got each pair right."""
    n = sum(len(v) for v in cells.values())
    return FamilyPower(family, n, sum(sum(v) for v in cells.values()), len(cells),
                       max((len(v) for v in cells.values()), default=0),
                       needed_lost(m_tests, alpha, signflip=signflip), m_tests, alpha, signflip)


def group_cells(rows: Iterable[tuple[str, int, float, bool]]) -> dict[str, dict[tuple[int, float], list[bool]]]:
    """(family, length, depth, baseline right) rows -> family -> cell -> rights."""
    out: dict[str, dict[tuple[int, float], list[bool]]] = defaultdict(lambda: defaultdict(list))
    for family, length, depth, right in rows:
        out[family][(length, depth)].append(right)
    return {f: dict(c) for f, c in out.items()}


def tests_per_family(n_lengths: int, n_depths: int) -> int:
    """Tests one family of a full grid adds to Holm's family: cells, lengths pooled (when the
    family has several lengths and each several depths), the family pooled."""
    per_length = n_lengths if n_lengths > 1 and n_depths > 1 else 0
    return n_lengths * n_depths + per_length + 1


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    lp, lq, ln = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    terms: list[float] = []
    for i in range(k, n + 1):
        t = math.exp(ln - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)
        terms.append(t)
        if i > n * p and t < 1e-18 * math.fsum(terms):  # past the mode the terms only shrink
            break
    return min(1.0, math.fsum(terms))


@dataclass(frozen=True)
class SlicePlan:
    """How many repetitions a slice needs for the gate to see a drop (``check --plan``);
    the baseline is assumed to get every pair right (a drop can only lose right pairs)."""

    families: int
    lengths: int
    depths: int
    reps: int
    drop: float
    max_drop: float
    alpha: float
    m_tests: int
    needed: int | None
    power: float  # P(gate fails) with ``reps`` when each pair is lost independently with p = drop
    reps_family: int | None  # least reps with which every family-wide drop of ``drop`` is flagged
    reps_cell: int | None  # the same for a drop of ``drop`` in one cell
    reps_power80: int | None  # least reps with power >= 0.8 (each pair lost with p = drop)
    reps_conclusive: int | None = None  # least reps with which check can see every drop above max_drop

    def lines(self) -> list[str]:
        cells = self.lengths * self.depths
        fams = f"{self.families} famil{'y' if self.families == 1 else 'ies'}"
        head = (f"slice: {fams} x {self.lengths} lengths x {self.depths} depths x {self.reps} reps "
                f"= {cells * self.reps} pairs per family; {self.m_tests} tests in Holm's family (alpha {self.alpha:g})")
        if self.needed is None:
            return [head, "no test can be significant at this many tests: fewer families, lengths or depths"]
        out = [head, f"a test is significant once {self.needed} pairs are lost and none gained "
                     f"(p = {best_p(self.needed):.2g} < {self.alpha:g}/{self.m_tests})"]
        n = cells * self.reps
        sees = self.needed <= material_lost(self.max_drop, n)
        out.append(f"with --reps {self.reps}, " + (
            f"every family-wide drop above --max-drop {self.max_drop:g} can be flagged" if sees else
            f"not every family-wide drop above --max-drop {self.max_drop:g} can be flagged: check says "
            "INCONCLUSIVE (exit 4)")
                   + ("" if sees or self.reps_conclusive is None else f"; that needs --reps {self.reps_conclusive}"))
        if self.drop <= self.max_drop + _EPS:
            out.append(f"a drop of {self.drop:g} is not above --max-drop {self.max_drop:g}: the gate passes it by "
                       "design; ask for a larger --drop")
            return out

        def reps(r: int | None) -> str:
            return f"--reps {r}" if r is not None else f"more than {_MAX_REPS} reps"

        out.append(f"to flag every drop of {self.drop:g} spread over a family: {reps(self.reps_family)}; "
                   f"confined to one cell: {reps(self.reps_cell)}")
        out.append(f"with --reps {self.reps}, a family where each pair is lost with probability {self.drop:g} fails "
                   f"the gate with probability {self.power:.2f}; 80% needs {reps(self.reps_power80)}")
        return out


_MAX_REPS = 100_000
_MAX_POWER_PAIRS = 50_000  # the power scan stops here (a drop just above --max-drop)


def _least_reps(ok: Callable[[int], bool], limit: int = _MAX_REPS) -> int | None:
    """The least reps r <= limit with ok(r), scanning up (power is not monotone in r: the
    --max-drop threshold moves in whole pairs)."""
    return next((r for r in range(1, limit + 1) if ok(r)), None)


def pooled_power(n_pairs: int, needed: int, drop: float, max_drop: float) -> float:
    """P(the family's pooled test flags it) when each of ``n_pairs`` right pairs is lost with
    probability ``drop``: at least ``needed`` lost and more than ``max_drop`` of them. A lower
    bound on the gate's power (its cells and lengths can only add failures)."""
    return binom_sf(max(needed, material_lost(max_drop, n_pairs)), n_pairs, drop)


def plan_slice(families: int, lengths: int, depths: int, reps: int, *, drop: float, max_drop: float = 0.05,
               alpha: float = 0.05) -> SlicePlan:
    """The reps a slice needs for the gate to see a drop of ``drop`` (see :class:`SlicePlan`)."""
    m = families * tests_per_family(lengths, depths)
    needed = needed_lost(m, alpha)
    cells = lengths * depths
    if needed is None:
        return SlicePlan(families, lengths, depths, reps, drop, max_drop, alpha, m, None, 0.0, None, None, None)
    d = needed

    def spread(r: int) -> bool:
        return math.ceil(drop * cells * r - _EPS) >= d

    def one_cell(r: int) -> bool:
        return math.ceil(drop * r - _EPS) >= d

    def power80(r: int) -> bool:
        return pooled_power(cells * r, d, drop, max_drop) >= 0.8

    material = drop > max_drop + _EPS
    return SlicePlan(families, lengths, depths, reps, drop, max_drop, alpha, m, needed,
                     pooled_power(cells * reps, needed, drop, max_drop),
                     _least_reps(spread) if material else None, _least_reps(one_cell) if material else None,
                     _least_reps(power80, max(1, _MAX_POWER_PAIRS // cells)) if material else None,
                     reps_to_see(cells, needed, max_drop))


def reps_to_see(n_cells: int, needed: int | None, max_drop: float) -> int | None:
    """Least reps per cell (every pair right in the baseline) with which every family-wide drop
    above ``max_drop`` is significant; None: none."""
    if needed is None:
        return None
    return _least_reps(lambda r: needed <= material_lost(max_drop, n_cells * r))

