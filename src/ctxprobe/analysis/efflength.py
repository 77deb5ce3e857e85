"""Effective length with an interval that is honest at every sample size.

A resample of a handful of cases cannot see the uncertainty it was never shown: with one
case a cell, every cell is constant under resampling, so a case-bootstrap prints
"4K (95%: 4K–4K)" from five coin flips. Here the interval comes from exact binomial
confidence bounds on every length's pooled accuracy, combined so that the interval's
coverage is guaranteed, not hoped for:

* **lower end** ``lo``: the walk (ascending lengths, stop at the first failure) run on
  one-sided Clopper–Pearson *lower* bounds at level ``alpha / 2``. ``lo`` overshoots the
  true effective length E only if the first length whose true accuracy is below the bar
  shows a lower bound at or above it: probability ≤ alpha / 2. Only that one length can
  cause the error, so no correction across lengths is needed.
* **upper end** ``hi``: the walk on one-sided Clopper–Pearson *upper* bounds at level
  ``alpha / (2K)`` for K lengths. ``hi`` falls short of E only if some length at or below
  E (true accuracy ≥ the bar) shows an upper bound below it; a union bound over the K
  lengths keeps that ≤ alpha / 2.

So P(lo ≤ E ≤ hi) ≥ 1 − alpha for any true accuracies, right at the bar included (there
the interval is wide, as it must be). "Reliable up to X" is said only of ``lo``: every
length up to it clears the bar with the chosen confidence.

``p_clear`` is a different quantity, stated as such: the posterior probability that a
length's pooled accuracy clears the bar, from a Jeffreys Beta(½, ½) prior on every cell's
rate (cells pooled by their case counts, Monte Carlo with a fixed seed).

A family whose cases were sent k times (a decoding variant's ``samples=k``) is counted at
n/deff trials, its design effect clustered by case (:mod:`ctxprobe.analysis.sampled`): its
k samples are not k independent cases. That coverage is measured, not guaranteed.

Partial scores (F1, recall) enter as fractional successes; the bounds then treat a score
of 0.5 like a coin flip, which over- rather than understates the spread. A length where
any prompt was truncated by the server is *not measured*: it neither passes nor fails,
and every walk stops below it.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ctxprobe.analysis.binomial import beta_ppf, betainc, cp_lower, cp_upper  # noqa: F401 -- re-exported here
from ctxprobe.analysis.grid import DEFAULT_THRESHOLD, clears, model_score
from ctxprobe.analysis.resolving import Settle, lower_level, settle, shown_failing, shown_reliable, upper_level
from ctxprobe.analysis.sampled import sample_clusters, sampled_deff, sampled_families
from ctxprobe.core.rows import ResultRow
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.units import fmt_length
from ctxprobe.core.outcome import Outcome

DEFAULT_DRAWS = 4000
EXACT_METHOD = ("exact binomial bounds (Clopper-Pearson): lower end at alpha/2, upper end at "
                "alpha/(2 x lengths); coverage >= confidence at any accuracy")
SAMPLED_METHOD = ("cases sent k times counted at n/deff (clustered by case: Kish's design effect at its 95% upper "
                  "bound, one pseudo-case at 1/2); coverage measured, not guaranteed")


# -- per-length evidence -----------------------------------------------------------------------


@dataclass(frozen=True)
class LengthEvidence:
    """One length of one family: scored cases pooled over depths, per-cell sums for the posterior."""

    length: int
    n: int
    successes: float
    truncated: int  # cases the server truncated (input_truncated)
    cells: tuple[tuple[float, int], ...] = ()  # (successes, n) per depth
    #: A sampled family's design effect at this length (its cases' k samples are clusters,
    #: :mod:`ctxprobe.analysis.sampled`): the bounds and the posterior count n/deff trials.
    deff: float = 1.0
    sampled: bool = False

    def effective(self, successes: float, n: float) -> tuple[float, float]:
        """(successes, trials) as the bounds count them: divided by ``deff`` when sampled."""
        return (successes, n) if self.deff == 1.0 else (successes / self.deff, n / self.deff)

    @property
    def measured(self) -> bool:
        """False when nothing was scored or the server truncated any prompt at this length."""
        return self.n > 0 and self.truncated == 0

    @property
    def mean(self) -> float | None:
        return self.successes / self.n if self.n else None


def evidence_by_family(rows: Iterable[ResultRow]) -> dict[str, list[LengthEvidence]]:
    rows = list(rows)
    sampled = sampled_families(rows)
    samples: dict[tuple[str, int], list[ResultRow]] = defaultdict(list)
    cells: dict[tuple[str, int], dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    truncated: dict[tuple[str, int], int] = defaultdict(int)
    for row in rows:
        key = (row.family, row.length)
        if row.family in sampled:
            samples[key].append(row)
        cells[key]  # noqa: B018 -- a length seen only through harness failures still exists
        if row.outcome == Outcome.INPUT_TRUNCATED:
            truncated[key] += 1
        if (score := model_score(row)) is not None:
            cells[key][row.depth].append(float(score))
    out: dict[str, list[LengthEvidence]] = defaultdict(list)
    for (family, length), by_depth in sorted(cells.items()):
        per_cell = tuple((math.fsum(s), len(s)) for _, s in sorted(by_depth.items()))
        deff = sampled_deff(sample_clusters(samples[(family, length)])) if family in sampled else 1.0
        out[family].append(LengthEvidence(length, sum(n for _, n in per_cell), math.fsum(s for s, _ in per_cell),
                                          truncated[(family, length)], per_cell, deff,
                                          family in sampled))
    return dict(out)


def _walk(evidence: Sequence[LengthEvidence], passes: Sequence[bool]) -> int | None:
    best: int | None = None
    for ev, ok in zip(evidence, passes):
        if not ev.measured or not ok:
            break
        best = ev.length
    return best


# -- the interval -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EffectiveLength:
    """One family's effective length: point, guaranteed-coverage interval, P(clears) per length."""

    family: str
    threshold: float
    point: int | None
    lo: int | None  # None: below the shortest length
    hi: int | None
    confidence: float
    lengths: tuple[int, ...]
    p_clear: dict[int, float]
    not_measured: tuple[int, ...] = ()  # lengths with truncated prompts or nothing scored
    truncated: tuple[int, ...] = ()  # lengths where the server truncated prompts
    min_cell_n: int = 0
    lower_bounds: dict[int, float] = field(default_factory=dict)
    upper_bounds: dict[int, float] = field(default_factory=dict)
    unit: str = "tokens"  # "entries" for phone books sized in entries
    #: Lengths of the grid no case was sent to (an adaptive walk stopped below them): untested.
    untested: tuple[int, ...] = ()
    #: How the interval was computed (None: the fixed-grid exact bounds of this module).
    method: str | None = None
    #: Adaptive runs: the walk's verdict per length ("pass", "fail", "open", "untested").
    states: dict[int, str] = field(default_factory=dict)
    #: Lengths left open (neither shown reliable nor shown failing): the cases that would
    #: settle each at its observed rate (:func:`ctxprobe.analysis.resolving.settle`).
    settle: dict[int, Settle] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        """True when the data pin the effective length to one value at this confidence."""
        return self.lo == self.hi

    @property
    def reliable_up_to(self) -> int | None:
        """The longest length that clears the bar with the chosen confidence (the lower end)."""
        return self.lo

    def label(self, value: int | None) -> str:
        if value is not None:
            return fmt_length(value, self.unit)
        return f"below {fmt_length(min(self.lengths), self.unit)}" if self.lengths else "none"

    def line(self) -> str:
        """The headline: a point only when the interval is one; else its two ends."""
        pct = f"{self.confidence * 100:g}%"
        if self.exact:
            text = f"effective length {self.label(self.point)} ({pct} confident)"
        elif self.lo is None:  # no length shown reliable: what was seen, and how far it may reach
            seen = f"{self.label(self.point)} observed" if self.point is not None else f"observed {self.label(None)}"
            reach = f"; it may reach {self.label(self.hi)}" if self.hi != self.point else ""
            text = (f"effective length {seen}; not shown reliable even at {self.label(min(self.lengths))}"
                    f"{reach} ({pct} confidence)")
        else:
            text = (f"effective length at least {self.label(self.lo)}, at most {self.label(self.hi)} "
                    f"({pct} confidence; observed {self.label(self.point)})")
        if self.untested:
            text += f"; untested at {', '.join(self.label(x) for x in self.untested)} (never sent)"
        if self.truncated:
            text += f"; not measured at {', '.join(self.label(x) for x in self.truncated)}: prompts truncated by the server"
        return text

    def interval_text(self) -> str:
        """The interval in a table cell: ``2K``, ``1K – 4K``, or ``none shown, ≤ 2K`` when no
        tested length is shown to clear the bar (never "below 1K – 1K")."""
        if self.exact:
            return self.label(self.lo)
        if self.lo is None:
            return f"none shown, ≤ {self.label(self.hi)}"
        return f"{self.label(self.lo)} – {self.label(self.hi)}"

    def to_dict(self) -> dict[str, object]:
        return {
            "point": self.point, "lo": self.lo, "hi": self.hi, "confidence": self.confidence,
            "reliable_up_to": self.reliable_up_to, "line": self.line(), "threshold": self.threshold,
            "method": self.method or EXACT_METHOD,
            "untested": list(self.untested),
            **({"states": {str(k): v for k, v in self.states.items()}} if self.states else {}),
            "p_clear": {str(k): v for k, v in self.p_clear.items()},
            "p_clear_method": "posterior P(pooled accuracy >= bar), Jeffreys Beta(1/2, 1/2) prior per cell",
            "not_measured": list(self.not_measured), "truncated": list(self.truncated),
            "settle": {str(k): v.to_dict() for k, v in sorted(self.settle.items())},
        }


def _jeffreys(ev: LengthEvidence, s: float, n: int) -> tuple[float, float]:
    s_eff, n_eff = ev.effective(s, n)
    return (s_eff + 0.5, n_eff - s_eff + 0.5)


def posterior_p_clear(ev: LengthEvidence, threshold: float, rng: random.Random, draws: int) -> float:
    """P(pooled rate ≥ bar) under independent Jeffreys posteriors per cell, weighted by case counts."""
    if ev.n == 0:
        return 0.0
    hits = 0
    for _ in range(draws):
        pooled = sum(n * rng.betavariate(*_jeffreys(ev, s, n)) for s, n in ev.cells if n) / ev.n
        hits += clears(pooled, threshold)
    return hits / draws


def effective_length_family(family: str, evidence: Sequence[LengthEvidence], *, threshold: float,
                            confidence: float, draws: int = DEFAULT_DRAWS, seed: int = 0,
                            unit: str = "tokens") -> EffectiveLength:
    evidence = sorted(evidence, key=lambda e: e.length)
    k = max(1, len(evidence))
    lower = {e.length: cp_lower(*e.effective(e.successes, e.n), lower_level(confidence)) for e in evidence}
    upper = {e.length: cp_upper(*e.effective(e.successes, e.n), upper_level(confidence, k)) for e in evidence}
    point = _walk(evidence, [clears(e.mean, threshold) for e in evidence])
    # the rule of :mod:`ctxprobe.analysis.resolving`, which also says what would settle an open length
    lo = _walk(evidence, [shown_reliable(*e.effective(e.successes, e.n), threshold, confidence) for e in evidence])
    hi = _walk(evidence, [not shown_failing(*e.effective(e.successes, e.n), threshold, confidence, k) for e in evidence])
    # only lengths the walk reaches can change the verdict: those up to the upper end
    open_lengths = {e.length: s for e in evidence if e.measured and hi is not None and e.length <= hi
                    and (s := settle(e.length, e.successes, e.n, threshold=threshold, confidence=confidence,
                                     lengths=k, per_rep=max(1, len(e.cells)), deff=e.deff, unit=unit)) is not None}
    rng = random.Random(seed)
    p_clear = {e.length: posterior_p_clear(e, threshold, rng, draws) for e in evidence}
    return EffectiveLength(
        family=family, threshold=threshold, point=point, lo=lo, hi=hi, confidence=confidence,
        lengths=tuple(e.length for e in evidence), p_clear=p_clear,
        not_measured=tuple(e.length for e in evidence if not e.measured),
        truncated=tuple(e.length for e in evidence if e.truncated),
        min_cell_n=min((n for e in evidence for _, n in e.cells), default=0),
        lower_bounds=lower, upper_bounds=upper, unit=unit,
        method=f"{EXACT_METHOD}; {SAMPLED_METHOD}" if any(e.sampled for e in evidence) else None,
        settle=open_lengths,
    )


def effective_lengths(rows: Iterable[ResultRow], *, threshold: float = DEFAULT_THRESHOLD,
                      confidence: float = 0.95, draws: int = DEFAULT_DRAWS, seed: int = 0,
                      units: dict[str, str] | None = None,
                      thresholds: dict[str, float] | None = None) -> list[EffectiveLength]:
    """Per family (sorted): the effective length with its guaranteed-coverage interval.
    ``units`` names a family's length unit when it is not tokens (phone books: entries);
    ``thresholds`` a family's own bar (default ``threshold``)."""
    if not 0.0 < confidence < 1.0:
        raise CtxprobeError(f"confidence must be between 0 and 1, got {confidence:g}")
    if draws < 1:
        raise CtxprobeError(f"draws must be >= 1, got {draws}")
    units, thresholds = units or {}, thresholds or {}
    return [effective_length_family(f, ev, threshold=thresholds.get(f, threshold), confidence=confidence, draws=draws, seed=seed,
                                    unit=units.get(f, "tokens"))
            for f, ev in sorted(evidence_by_family(rows).items())]
