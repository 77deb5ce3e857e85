"""Paired comparison of two runs on the same seeded cases (the regression gate built on it
is :mod:`ctxprobe.analysis.gate`; reading stored runs, :mod:`ctxprobe.report.compare_runs`).

Two runs built from the same spec seed and tokenizer contain the *same prompts*, so every
case is a matched pair: pairing removes the case-to-case variance (a hard case is hard for
both models) and a few hundred cases detect differences an unpaired comparison would miss.

Decisions made here, and why:

- **Pairing**: by ``case_id`` over the cases both runs hold; every shared case must have
  the same prompt hash, else the runs were built differently (other seed, tokenizer, chat
  template, haystack) and pairing them would compare different questions -- refused, naming
  the first mismatching case. Cases only one run holds are counted, not paired.
- **Harness failures** (``error``, ``input_truncated``, or no response yet) are excluded
  pairwise: if either side failed to measure a case, the pair says nothing.
- **Binary outcome for McNemar**: success = full credit (score >= 1, i.e. ``correct``).
  ctxprobe scores strictly; counting a half-right set answer as a success would hide the
  very degradation (recall dropping from 1.0 to 0.6) a regression check exists to catch.
  The mean difference and its bootstrap use the raw scores, so partial credit still counts
  there. Strict niah scores are 0/1, where both views agree.
- **McNemar's exact test**: the two-sided binomial test on the discordant pairs (b, c)
  with p = 0.5 -- exact at the small counts of a cell, where the chi-square form is not.
- **Multiple comparisons: Holm** (family-wise error), over every cell, one test per length
  pooled over its depths and one pooled test per family (pools see a drop spread over
  cells too small to test alone: McNemar's p depends only on the discordant counts, so a
  pool gets the same p from fewer pairs per cell). A gate that fails builds must not blame a cell by chance in one of
  fifteen cells; Holm bounds the chance of *any* false blame at alpha, under any
  dependence between cells, and is uniformly more powerful than Bonferroni. (Benjamini-
  Hochberg bounds only the expected share of false blames -- fine for exploration, too
  loose for a red CI build.)
- **Multi-needle cases** (the phone book): paired needle by needle (same book, same names,
  checked), one family per needle count N; a cell's counts are needles right in one run
  only, and its test is the exact sign-flip test of per-case differences
  (:mod:`ctxprobe.analysis.compare_needles`), which is McNemar's exact test when N = 1.
- **Sampled cases** (a variant's ``samples=k``): one pair per case, its value the mean of
  its samples, tested by the sign-flip test of per-case differences
  (:mod:`ctxprobe.analysis.compare_samples`); k = 1 on both sides: the paths above.
- **Paired bootstrap**: resample pairs within cells (same stratification as bootstrap.py),
  applying the same indices to both runs, for the mean difference and the effective-length
  difference (a missing effective length counts as 0 tokens).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from ctxprobe.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    StratifiedResampler,
    Stratum,
    ThresholdRule,
    first_scored,
    length_means,
    quantile,
    walk,
)
from ctxprobe.analysis.compare_needles import agreement_note, discordant, same_needles, signflip_p
from ctxprobe.analysis.compare_samples import is_sampled, samples_test, case_value
from ctxprobe.analysis.exact_tests import holm, mcnemar_exact
from ctxprobe.errors import CtxprobeError
from ctxprobe.core.outcome import HARNESS_OUTCOMES
from ctxprobe.spec.units import fmt_depth, fmt_tokens

Needles = tuple[tuple[str, bool], ...]

_FULL_CREDIT = 1.0 - 1e-9


@dataclass(frozen=True)
class CaseResult:
    """What pairing needs from one stored case (``score`` None: not a measurement)."""

    case_id: str
    prompt_hash: str
    family: str
    length: int
    depth: float
    score: float | None
    outcome: str | None
    needles: Needles | None = None  # (name, right) per needle of a multi-needle case
    #: A sampled case's value per measured sample (full credit 0/1, or the share of needles
    #: right); None: sent once. ``score`` is then the mean raw score of the samples.
    samples: tuple[float, ...] | None = None


@dataclass(frozen=True)
class RunCases:
    run_id: str
    model: str
    cases: dict[str, CaseResult]
    #: what decides a run's prompts besides its cells (seed, tokenizer, chat template, case
    #: builder, lengths…): named when two runs cannot pair
    about: dict[str, Any] = field(default_factory=dict)


def unpaired_reason(a: RunCases, b: RunCases) -> str:
    """Why two runs hold different cases, from what their specs and builders record."""
    diffs = [f"{k.replace('_', ' ')} {a.about[k]!r} vs {b.about[k]!r}" for k in a.about
             if k in b.about and a.about[k] != b.about[k]]
    return "; ".join(diffs) if diffs else "seed, tokenizer, chat template, haystack or case builder differ"


def _repair_hint(a: RunCases, b: RunCases) -> str:
    return (f"compare runs of one spec, or re-send {a.run_id}'s prompts to {b.model}: `ctxprobe export {a.run_id} "
            f"--jsonl -o {a.run_id}.jsonl` then `ctxprobe run --cases {a.run_id}.jsonl --model {b.model}`, and "
            f"compare {a.run_id} with that run")


@dataclass(frozen=True)
class Pair:
    family: str
    length: int
    depth: float
    a: float
    b: float
    a_needles: Needles | None = None
    b_needles: Needles | None = None
    a_samples: tuple[float, ...] | None = None
    b_samples: tuple[float, ...] | None = None


@dataclass(frozen=True)
class CellComparison:
    """B against A on one cell (``depth`` None: the depths of one length pooled; ``length``
    None too: all cells of the family pooled)."""

    family: str
    length: int | None
    depth: float | None
    n_pairs: int
    mean_a: float | None
    mean_b: float | None
    a_only: int  # pairs A got fully right and B did not
    b_only: int
    p_value: float
    p_adjusted: float = 1.0
    significant: bool = False
    by_needle: bool = False  # paired needle by needle (a multi-needle family, see compare_needles)
    #: Sampled cases: tested on per-case means (a_only / b_only count cases); ``shift`` is
    #: the mean per-case difference B - A of the tested values, the direction of the test.
    by_samples: bool = False
    shift: float = 0.0

    @property
    def b_better(self) -> bool:
        """Which way the difference points (B better than A)."""
        return self.shift > 0 if self.by_samples else self.b_only > self.a_only

    @property
    def b_worse(self) -> bool:
        return self.shift < 0 if self.by_samples else self.b_only < self.a_only

    @property
    def diff(self) -> float | None:
        """mean B - mean A on the raw scores."""
        return None if self.mean_a is None or self.mean_b is None else self.mean_b - self.mean_a

    @property
    def label(self) -> str:
        if self.length is None:
            return f"{self.family} (all cells)"
        if self.depth is None:
            return f"{self.family} L={fmt_tokens(self.length)} (all depths)"
        if self.by_needle:  # one depth only: the needles sit in every bin
            return f"{self.family} L={fmt_tokens(self.length)}"
        return f"{self.family} L={fmt_tokens(self.length)} d={fmt_depth(self.depth or 0.0)}"

    @property
    def unit(self) -> str:
        """What a_only / b_only count."""
        return "cases" if self.by_samples else "needles" if self.by_needle else "pairs"


@dataclass(frozen=True)
class FamilyComparison:
    family: str
    pooled: CellComparison
    cells: list[CellComparison]
    mean_diff: float
    mean_diff_ci: tuple[float, float]
    effective_a: int | None
    effective_b: int | None
    effective_diff_ci: tuple[int, int]
    #: one paired test per length over its depths, where it is a test of its own (the
    #: family has several lengths, the length several depths)
    lengths: list[CellComparison] = field(default_factory=list)

    @property
    def tests(self) -> list[CellComparison]:
        """Every test of the family in Holm's family: cells, lengths pooled, all cells pooled."""
        return [*self.cells, *self.lengths, self.pooled]


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    alpha: float
    confidence: float
    families: list[FamilyComparison]
    n_paired: int
    n_excluded: int  # shared cases left out: a harness failure or no response on either side
    only_a: int
    only_b: int
    rule: ThresholdRule = field(default_factory=ThresholdRule)
    #: "prompt" (the same prompts), or "content": the same seeded cases asked in other
    #: prompts (two prompt variants, ctxprobe.analysis.variants)
    paired_by: str = "prompt"
    #: Samples per case (k) of run A and run B (1: each case sent once).
    samples: tuple[int, int] = (1, 1)

    @property
    def n_tests(self) -> int:
        """Tests in Holm's family (every family's cells, lengths and pooled test)."""
        return sum(len(f.tests) for f in self.families)

    def significant_cells(self) -> list[CellComparison]:
        return [c for f in self.families for c in f.tests if c.significant]

    def verdict(self, *, within: float | None = None) -> str:
        """One line: which run is better, with how many cells and the mean difference;
        ``within``: every significant drop is at most this (a gate that passed), said so."""
        sig = self.significant_cells()
        worse = [c for c in sig if c.b_worse]
        better = [c for c in sig if c.b_better]
        n_tests = self.n_tests
        diffs = "; ".join(_family_summary(f, self.confidence) + agreement_note(
            f.mean_diff_ci, f.pooled.significant, f.pooled.n_pairs, self.confidence) for f in self.families)
        where = f"{len(sig)} of {n_tests} tests significant at Holm alpha={self.alpha:g}"
        tolerated = "" if within is None else f", within --max-drop {within:g}"
        if worse and better:
            head = f"MIXED: {self.run_b} is worse than {self.run_a} in {len(worse)}{tolerated} and better in {len(better)}"
        elif worse:
            head = f"WORSE: {self.run_b} is significantly worse than {self.run_a}{tolerated}"
        elif better:
            head = f"BETTER: {self.run_b} is significantly better than {self.run_a}"
        else:
            head = f"NO SIGNIFICANT DIFFERENCE between {self.run_a} and {self.run_b}"
        how = "" if self.paired_by == "prompt" else " (paired by content: the same seeded cases in other prompts)"
        if self.samples != (1, 1):
            how += f" (samples per case {self.samples[0]} vs {self.samples[1]}: per-case means, sign-flip tests)"
        return f"{head} ({where}; {self.n_paired} paired cases{how}; {diffs})"


def _family_summary(f: FamilyComparison, confidence: float) -> str:
    def eff(v: int | None) -> str:  # no length clears the bar: below the shortest one tested
        return fmt_tokens(v) if v is not None else f"below {fmt_tokens(min(c.length or 0 for c in f.cells))}"

    lo, hi = f.effective_diff_ci
    head = (f"{f.family}: mean {f.mean_diff:+.3f} ({confidence * 100:g}%: {f.mean_diff_ci[0]:+.3f} to "
            f"{f.mean_diff_ci[1]:+.3f}), effective length {eff(f.effective_a)} -> {eff(f.effective_b)}")
    if f.effective_a is None or f.effective_b is None:
        # "below 1K" has no number of tokens: a difference from it ("+2K to +2K") would count it as 0
        return head + " (no difference in tokens: below the shortest length has no number)"
    return head + (f" (difference {confidence * 100:g}%: {'+' if lo >= 0 else ''}{fmt_tokens(lo)} to "
                   f"{'+' if hi >= 0 else ''}{fmt_tokens(hi)})")


def pair_runs(a: RunCases, b: RunCases) -> tuple[list[Pair], int, int, int]:
    """(pairs, excluded, only in A, only in B); refuses runs whose shared cases differ."""
    # grid order (not string order, where L2048 sorts before L512), so "first" reads naturally
    shared = sorted(a.cases.keys() & b.cases.keys(), key=lambda k: _grid_key(a.cases[k]))
    if not shared:
        raise CtxprobeError(
            f"runs {a.run_id} and {b.run_id} share no case ({unpaired_reason(a, b)}): {_repair_hint(a, b)}")
    for case_id in shared:
        ca_, cb_ = a.cases[case_id], b.cases[case_id]
        if ca_.needles is not None and cb_.needles is not None and not same_needles(ca_.needles, cb_.needles):
            raise CtxprobeError(
                f"runs {a.run_id} and {b.run_id} ask different needles in case {case_id}: cannot pair them needle "
                "by needle")
        if ca_.prompt_hash != cb_.prompt_hash:
            raise CtxprobeError(
                f"runs {a.run_id} and {b.run_id} hold different prompts for case {case_id}, so they cannot pair "
                f"({unpaired_reason(a, b)}): {_repair_hint(a, b)}")
    pairs: list[Pair] = []
    excluded = 0
    for case_id in shared:
        ca, cb = a.cases[case_id], b.cases[case_id]
        sa, sb = _measured(ca), _measured(cb)
        if sa is None or sb is None:
            excluded += 1
            continue
        pairs.append(Pair(ca.family, ca.length, ca.depth, float(sa), float(sb), ca.needles, cb.needles,
                          ca.samples, cb.samples))
    if not pairs:
        raise CtxprobeError(
            f"runs {a.run_id} and {b.run_id} have no case measured on both sides (all {excluded} shared cases "
            "are harness failures or unanswered); resume the runs first")
    return pairs, excluded, len(a.cases) - len(shared), len(b.cases) - len(shared)


def _grid_key(c: CaseResult) -> tuple[str, int, float, str]:
    return (c.family, c.length, c.depth, c.case_id)


def _measured(c: CaseResult) -> float | None:
    """The case's score when it measures the model; None when unanswered or a harness failure."""
    return None if c.outcome is None or c.outcome in HARNESS_OUTCOMES else c.score


def _test(family: str, length: int | None, depth: float | None, pairs: list[Pair],
          sampled: bool = False) -> CellComparison:
    n = len(pairs)
    if sampled and pairs:  # per-case means of k samples (compare_samples)
        a_only, b_only, p_value, shift = samples_test([case_value(p.b_samples, p.b) - case_value(p.a_samples, p.a)
                                                       for p in pairs])
        return CellComparison(family, length, depth, n, math.fsum(p.a for p in pairs) / n,
                              math.fsum(p.b for p in pairs) / n, a_only, b_only, p_value, by_samples=True, shift=shift)
    if pairs and all(p.a_needles is not None and p.b_needles is not None for p in pairs):
        counts = [discordant(p.a_needles or (), p.b_needles or ()) for p in pairs]
        return CellComparison(
            family, length, depth, n, math.fsum(p.a for p in pairs) / n, math.fsum(p.b for p in pairs) / n,
            sum(c[0] for c in counts), sum(c[1] for c in counts), signflip_p([p.b - p.a for p in pairs]),
            by_needle=True)
    a_only = sum(1 for p in pairs if p.a >= _FULL_CREDIT > p.b)
    b_only = sum(1 for p in pairs if p.b >= _FULL_CREDIT > p.a)
    return CellComparison(
        family, length, depth, n,
        math.fsum(p.a for p in pairs) / n if n else None, math.fsum(p.b for p in pairs) / n if n else None,
        a_only, b_only, mcnemar_exact(a_only, b_only))


def _strata(cells: dict[tuple[int, float], list[Pair]]) -> tuple[list[int], list[Stratum], list[Stratum]]:
    keys = sorted(cells)
    return (sorted({length for length, _ in keys}),
            [Stratum(length, tuple(p.a for p in cells[(length, d)])) for length, d in keys],
            [Stratum(length, tuple(p.b for p in cells[(length, d)])) for length, d in keys])


def _effective(strata: list[Stratum], lengths: list[int], rule: ThresholdRule,
               picks: list[list[int]] | None = None) -> int | None:
    means = length_means(strata, lengths, picks)
    return walk(lengths, means, rule.resolve(first_scored(means)))


def _paired_bootstrap(cells: dict[tuple[int, float], list[Pair]], rule: ThresholdRule, n_resamples: int,
                      seed: int, confidence: float) -> tuple[tuple[float, float], tuple[int, int]]:
    """Percentile intervals of (mean B - mean A) and of (effective B - effective A)."""
    lengths, strata_a, strata_b = _strata(cells)
    total = sum(len(s.scores) for s in strata_a)
    resampler = StratifiedResampler([len(s.scores) for s in strata_a], seed)
    mean_diffs: list[float] = []
    eff_diffs: list[int] = []
    for _ in range(n_resamples):
        picks = resampler.draw()
        sum_a = sum(sum(map(s.scores.__getitem__, idx)) for s, idx in zip(strata_a, picks))
        sum_b = sum(sum(map(s.scores.__getitem__, idx)) for s, idx in zip(strata_b, picks))
        mean_diffs.append((sum_b - sum_a) / total)
        ea = _effective(strata_a, lengths, rule, picks) or 0
        eb = _effective(strata_b, lengths, rule, picks) or 0
        eff_diffs.append(eb - ea)
    tail = (1.0 - confidence) / 2
    mean_diffs.sort()
    eff_diffs.sort()
    return ((quantile(mean_diffs, tail), quantile(mean_diffs, 1.0 - tail)),
            (quantile(eff_diffs, tail), quantile(eff_diffs, 1.0 - tail)))


def compare_cases(a: RunCases, b: RunCases, *, alpha: float = 0.05, rule: ThresholdRule | None = None,
                  n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, confidence: float = 0.95) -> Comparison:
    """Compare run B with run A on their paired cases (see the module docstring)."""
    if not 0.0 < alpha < 1.0:
        raise CtxprobeError(f"alpha must be between 0 and 1, got {alpha:g}")
    rule = rule or ThresholdRule()
    pairs, excluded, only_a, only_b = pair_runs(a, b)
    by_family: dict[str, dict[tuple[int, float], list[Pair]]] = defaultdict(lambda: defaultdict(list))
    for p in pairs:
        by_family[p.family][(p.length, p.depth)].append(p)
    raw: list[tuple[str, CellComparison, list[CellComparison], list[CellComparison]]] = []
    for family in sorted(by_family):
        cells = by_family[family]
        sampled = is_sampled((p.a_samples, p.b_samples) for ps in cells.values() for p in ps)  # one rule per family
        tests = [_test(family, length, depth, cells[(length, depth)], sampled) for length, depth in sorted(cells)]
        per_length = [_test(family, length, None, [p for (ln, _), ps in sorted(cells.items()) if ln == length
                                                    for p in ps], sampled) for length in _pooled_lengths(cells)]
        pooled = _test(family, None, None, [p for ps in cells.values() for p in ps], sampled)
        raw.append((family, pooled, tests, per_length))
    flat = [t for _, pooled, tests, per_length in raw for t in [*tests, *per_length, pooled]]
    adjusted = iter(holm([t.p_value for t in flat]))
    families: list[FamilyComparison] = []
    for family, pooled, tests, per_length in raw:
        done = [_adjust(t, next(adjusted), alpha) for t in tests]
        done_lengths = [_adjust(t, next(adjusted), alpha) for t in per_length]
        pooled = _adjust(pooled, next(adjusted), alpha)
        cells = by_family[family]
        mean_ci, eff_ci = _paired_bootstrap(cells, rule, n_resamples, seed, confidence)
        lengths, strata_a, strata_b = _strata(cells)
        families.append(FamilyComparison(
            family, pooled, done, (pooled.mean_b or 0.0) - (pooled.mean_a or 0.0), mean_ci,
            _effective(strata_a, lengths, rule), _effective(strata_b, lengths, rule), eff_ci, done_lengths))
    return Comparison(a.run_id, b.run_id, alpha, confidence, families, len(pairs), excluded, only_a, only_b, rule)


def _pooled_lengths(cells: dict[tuple[int, float], list[Pair]]) -> list[int]:
    """Lengths whose depths pooled make a test of their own: the family has several lengths
    (else it is the family's pooled test) and the length several depths (else its cell's)."""
    lengths = sorted({length for length, _ in cells})
    if len(lengths) < 2:
        return []
    return [ln for ln in lengths if sum(1 for length, _ in cells if length == ln) > 1]


def _adjust(t: CellComparison, p_adj: float, alpha: float) -> CellComparison:
    return replace(t, p_adjusted=p_adj, significant=p_adj < alpha)
