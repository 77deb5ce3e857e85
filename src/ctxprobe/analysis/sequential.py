"""Always-valid decisions "does this length clear the bar?" for sequential sampling.

The data of one length are *repetitions*: one case at each of D depths, scored in [0, 1];
a repetition's mean X has expectation p̄, the depth-averaged accuracy the effective length
is defined on. The evidence that p̄ ≥ bar ("passes") is a weighted average of three test
supermartingales, each worth 1 before any data:

* the uniform mixture likelihood ratio over the cases (Robbins' method of mixtures)
  ``U⁺ = ∫_bar^1 (q/bar)^S ((1-q)/(1-bar))^F dq / (1 - bar)`` (S successes, F failures),
  good for any accuracy above the bar;
* the likelihood ratio at q = 1, ``(1/bar)^S`` while nothing failed: a perfect length is
  decided as soon as a fixed-size exact test would decide it, 24 cases at level 0.025;
* a bet on the repetitions' means, ``∏ (1 + λ (X - bar))`` with λ = 0.9 / bar: a model
  that gets the same depths right every time (e.g. blind in the middle) has repetition
  means with no spread, which the per-case ratios cannot see.

Under any p̄ below the bar each is a nonnegative supermartingale over repetitions (the
per-case ratios because the product of one repetition's factors is at most its
depth-averaged factor, by the AM-GM inequality; the bet because it is linear in X), and so
is their average. By Ville's inequality it *ever* reaches 1/level with probability ≤ level:
the data may be looked at after every repetition and sampling stopped whenever it likes.
"Fails" is the mirror image (q = 0, bets against the bar). Partial scores are allowed
(every factor is convex, or linear, in the score).

The weights (0.7, 0.25, 0.05) were chosen by simulation (docs/statistics.md): the point
mass brings a perfect length from 36 cases to 30 (a fixed-size exact test: 24), the bet a
blind-middle one from 60 to 30, and together they cost a length at 0.95 about 4 cases in 100.

"Fails" has a fourth test, weighted 0.1 (taken from the mixture's 0.7): a bet on the
repetition means whose stake follows their spread so far, the plug-in
``λ_t = (bar - μ̂) / (v̂ + (bar - μ̂)²)`` from the repetitions *before* t (so the product
stays a supermartingale), capped like the fixed bet. The spread of a repetition mean
comes only from the depths the model is unsure at: a length that fails because one depth
is weak (1, 0.4, 1) has repetition means far less spread than independent cases at their
average, and with this bet it is decided in 0.63× the cases the other three need
(``benchmarks/bench_adaptive_depths.py``; an easy fail costs one repetition more). It goes on the fail side only: there the stake
may reach 0.9 / (1 - bar) (≈ 6 at bar 0.856), while a pass-side bet is capped at
0.9 / bar (≈ 1) and so cannot turn a small spread into evidence faster than the mixture.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Literal

from ctxprobe.analysis.efflength import betainc

Decision = Literal["pass", "fail", "open"]

#: weights of the uniform mixture, the point mass at the extreme and the bet on repetition means
WEIGHTS = (0.7, 0.25, 0.05)
#: the bet's stake as a fraction of the largest one that keeps every factor positive
STAKE = 0.9
#: the fail side's weight on the bet whose stake follows the spread (taken from the mixture's)
SPREAD_WEIGHT = 0.1
_EPS = 1e-9


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def log_evidence_pass(successes: float, n: float, bar: float) -> float:
    """log U⁺, the uniform mixture over the rates ≥ bar (large when the rate is ≥ bar)."""
    if n <= 0 or bar >= 1.0:
        return 0.0 if n <= 0 else -math.inf
    if bar <= 0.0:
        return math.inf  # every rate clears a bar of 0
    f = n - successes
    upper_tail = betainc(f + 1, successes + 1, 1.0 - bar)  # P(Beta(S+1, F+1) > bar)
    return (_log_beta(successes + 1, f + 1) + _log(upper_tail) - successes * math.log(bar)
            - f * math.log1p(-bar) - math.log1p(-bar))


def log_evidence_fail(successes: float, n: float, bar: float) -> float:
    """log U⁻, the uniform mixture over the rates < bar."""
    if n <= 0 or bar <= 0.0:
        return 0.0 if n <= 0 else -math.inf
    if bar >= 1.0:
        return math.inf if successes < n else -math.inf
    f = n - successes
    lower_tail = betainc(successes + 1, f + 1, bar)  # P(Beta(S+1, F+1) < bar)
    return (_log_beta(successes + 1, f + 1) + _log(lower_tail) - successes * math.log(bar)
            - f * math.log1p(-bar) - math.log(bar))


def _lse(terms: list[float]) -> float:
    top = max(terms)
    if top == -math.inf or top == math.inf:
        return top
    return top + math.log(math.fsum(math.exp(t - top) for t in terms))


def _log_bet(rep_means: Sequence[float], bar: float, sign: int) -> float:
    """log ∏ (1 + sign·λ (X - bar)), λ = STAKE / (bar if sign > 0 else 1 - bar)."""
    lam = STAKE / (bar if sign > 0 else 1.0 - bar)
    return math.fsum(math.log1p(sign * lam * (x - bar)) for x in rep_means)


def evidence(rep_means: Sequence[float], per_rep: int, bar: float, *, spread: bool = True) -> tuple[float, float]:
    """(log evidence that p̄ ≥ bar, log evidence that p̄ < bar) from whole repetitions.

    ``rep_means``: each repetition's mean score over its ``per_rep`` depths. ``spread=False``
    leaves out the fail side's spread-following bet (for comparison only)."""
    if not rep_means or not 0.0 < bar < 1.0:
        return _evidence(math.fsum(rep_means), len(rep_means), 0.0, 0.0, per_rep, bar,
                         any(x < 1.0 - _EPS for x in rep_means))
    return _evidence(math.fsum(rep_means), len(rep_means), _log_bet(rep_means, bar, +1),
                     _log_bet(rep_means, bar, -1), per_rep, bar, False,
                     _spread_bet(rep_means, bar)[0] if spread else None)


def _spread_stake(mean: float, var: float, bar: float) -> float:
    """The fail-side stake for a mean and spread: (bar - mean) / (var + (bar - mean)²), in [0, cap]."""
    gap = bar - mean
    if gap <= 0.0:
        return 0.0
    return min(gap / (var + gap * gap), STAKE / (1.0 - bar))


def _spread_bet(rep_means: Sequence[float], bar: float) -> tuple[float, float]:
    """(log ∏ (1 - λ_t (X_t - bar)), the stake the next repetition would get).

    λ_t uses only the repetitions before t: their mean and mean squared deviation, each
    with one pseudo-repetition of mean 1/2 and spread 1/4 so the first stake is defined."""
    total, count, sq, log_bet = 0.5, 1, 0.25, 0.0
    for x in rep_means:
        mean = total / count
        log_bet += math.log1p(-_spread_stake(mean, sq / count, bar) * (x - bar))
        total, count, sq = total + x, count + 1, sq + (x - mean) ** 2
    return log_bet, _spread_stake(total / count, sq / count, bar)


def _evidence(total: float, reps: int, bet_pass: float, bet_fail: float, per_rep: int, bar: float,
              any_miss: bool, spread_fail: float | None = None) -> tuple[float, float]:
    """:func:`evidence` from sufficient statistics: the sum of the repetition means, their
    count, the two bets' logs and the spread-following fail bet's log (None: without that
    bet, the other three weighted as before; ``any_miss`` matters only for a bar of 1)."""
    if reps == 0:
        return 0.0, 0.0
    if bar <= 0.0:
        return math.inf, -math.inf
    if bar >= 1.0:
        return -math.inf, (math.inf if any_miss else -math.inf)
    n = reps * per_rep
    s = min(float(n), total * per_rep)
    f = n - s
    w_mix, w_point, w_bet = (math.log(w) for w in WEIGHTS)
    passes = [w_mix + log_evidence_pass(s, n, bar), w_bet + bet_pass]
    fails = [w_mix + log_evidence_fail(s, n, bar), w_bet + bet_fail]
    if f < _EPS * n:
        passes.append(w_point - n * math.log(bar))
    if s < _EPS * n:
        fails.append(w_point - n * math.log1p(-bar))
    if spread_fail is None:
        return _lse(passes), _lse(fails)
    # the spread bet's weight comes out of the mixture's: the point mass and the fixed bet keep theirs
    fails[0] += math.log1p(-SPREAD_WEIGHT / WEIGHTS[0])
    return _lse(passes), _lse(fails + [math.log(SPREAD_WEIGHT) + spread_fail])


def levels(alpha: float, lengths: int, extra: int = 0) -> tuple[float, float]:
    """(pass level, fail level) for a walk over ``lengths`` lengths (+ ``extra`` bisections).

    The walk's answer is wrong only if the first truly failing length is passed (one
    length, or one more per bisection) or a truly passing length below it is failed (any
    of them): α/2 for the first, α/2 shared by the lengths for the second."""
    return alpha / (2 * (1 + extra)), alpha / (2 * (lengths + extra))


def _verdict(log_pass: float, log_fail: float, pass_level: float, fail_level: float) -> Decision:
    if log_pass >= math.log(1.0 / pass_level):
        return "pass"
    if log_fail >= math.log(1.0 / fail_level):
        return "fail"
    return "open"


def decide(rep_means: Sequence[float], per_rep: int, bar: float, pass_level: float, fail_level: float,
           ) -> Decision:
    """"pass" / "fail" once the evidence for it reaches 1/its level, else "open"."""
    return _verdict(*evidence(rep_means, per_rep, bar), pass_level, fail_level)


def reps_needed(rep_means: Sequence[float], per_rep: int, bar: float, pass_level: float, fail_level: float,
                cap: int) -> int:
    """Repetitions (in all, ≤ cap) after which the data would be decided if the repetitions
    to come scored like the mean of those so far; ``cap`` if never."""
    if not rep_means:
        return cap
    have, total = len(rep_means), math.fsum(rep_means)
    mean = total / have
    inner = 0.0 < bar < 1.0
    bet_pass = _log_bet(rep_means, bar, +1) if inner else 0.0
    bet_fail = _log_bet(rep_means, bar, -1) if inner else 0.0
    step_pass = _log_bet([mean], bar, +1) if inner else 0.0
    step_fail = _log_bet([mean], bar, -1) if inner else 0.0
    spread, stake = _spread_bet(rep_means, bar) if inner else (-math.inf, 0.0)
    step_spread = math.log1p(-stake * (mean - bar)) if inner else 0.0  # at today's stake
    miss = any(x < 1.0 - _EPS for x in rep_means)

    def decided(reps: int) -> bool:
        more = reps - have
        return _verdict(*_evidence(total + more * mean, reps, bet_pass + more * step_pass,
                                   bet_fail + more * step_fail, per_rep, bar, miss, spread + more * step_spread),
                        pass_level, fail_level) != "open"

    lo, hi = have, cap
    if not decided(cap):
        return cap
    while lo < hi:  # the evidence grows with more repetitions at a fixed mean away from the bar
        mid = (lo + hi) // 2
        if decided(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def next_reps(rep_means: Sequence[float], reps: int, per_rep: int, bar: float, pass_level: float,
              fail_level: float, *, first: int, cap: int, growth: float) -> int:
    """Repetitions to plan next for an undecided length: ``first`` at an unsampled one, else
    the projected need, at least one more and at most ``growth`` times as many."""
    if reps <= 0:
        return min(cap, first)
    need = reps_needed(rep_means, per_rep, bar, pass_level, fail_level, cap)
    return min(cap, max(reps + 1, math.floor(growth * reps)), max(reps + 1, need))


def expected_reps(accuracy: float, per_rep: int, bar: float, pass_level: float, fail_level: float, *,
                  first: int, cap: int, growth: float, sims: int = 200, seed: int = 0) -> tuple[float, float]:
    """(mean repetitions spent, share decided correctly) at one length of true ``accuracy``
    (independent cases), by simulating the rounds :func:`next_reps` plans."""
    rng = random.Random(seed)
    spent = right = 0
    truth = "pass" if accuracy >= bar else "fail"
    for _ in range(sims):
        means: list[float] = []
        reps = 0
        while True:
            reps = next_reps(means, reps, per_rep, bar, pass_level, fail_level, first=first, cap=cap, growth=growth)
            while len(means) < reps:
                means.append(sum(rng.random() < accuracy for _ in range(per_rep)) / per_rep)
            state = decide(means, per_rep, bar, pass_level, fail_level)
            if state != "open" or reps >= cap:
                break
        spent += reps
        right += state == truth
    return spent / sims, right / sims
