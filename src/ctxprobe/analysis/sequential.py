"""Always-valid decisions "does this length clear the bar?" for sequential sampling.

Mixture likelihood ratios against the bar (Robbins' method of mixtures): for "passes",

    M⁺(S, F) = ∫_bar^1 (p/bar)^S ((1-p)/(1-bar))^F dp / (1 - bar)

and for "fails" the mirror mixture over [0, bar). Under any true rate on the other side of
the bar (accuracy < bar for M⁺; ≥ bar for M⁻) each is a nonnegative supermartingale in the
number of cases, so by Ville's inequality the chance it *ever* reaches 1/level is ≤ level:
the data may be looked at after every case and the sweep stopped whenever it likes.

With S successes and F failures, ∫ p^S (1-p)^F over [bar, 1] is B(S+1, F+1) times the
upper tail of Beta(S+1, F+1) at the bar -- computed with the incomplete beta of
:mod:`ctxprobe.analysis.efflength`. Fractional S (partial scores) is allowed.
"""

from __future__ import annotations

import math
from typing import Literal

from ctxprobe.analysis.efflength import betainc

Decision = Literal["pass", "fail", "open"]


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def log_evidence_pass(successes: float, n: float, bar: float) -> float:
    """log M⁺: evidence that the true rate is ≥ bar (large when it is)."""
    if n <= 0 or bar >= 1.0:
        return 0.0 if n <= 0 else -math.inf
    if bar <= 0.0:
        return math.inf  # every rate clears a bar of 0
    f = n - successes
    upper_tail = betainc(f + 1, successes + 1, 1.0 - bar)  # P(Beta(S+1, F+1) > bar)
    return (_log_beta(successes + 1, f + 1) + _log(upper_tail) - successes * math.log(bar)
            - f * math.log1p(-bar) - math.log1p(-bar))


def log_evidence_fail(successes: float, n: float, bar: float) -> float:
    """log M⁻: evidence that the true rate is < bar."""
    if n <= 0 or bar <= 0.0:
        return 0.0 if n <= 0 else -math.inf
    if bar >= 1.0:
        return math.inf if successes < n else -math.inf
    f = n - successes
    lower_tail = betainc(successes + 1, f + 1, bar)  # P(Beta(S+1, F+1) < bar)
    return (_log_beta(successes + 1, f + 1) + _log(lower_tail) - successes * math.log(bar)
            - f * math.log1p(-bar) - math.log(bar))


def decide(successes: float, n: float, bar: float, level: float) -> Decision:
    """"pass" / "fail" once the evidence for it reaches 1/level, else "open"."""
    need = math.log(1.0 / level)
    if log_evidence_pass(successes, n, bar) >= need:
        return "pass"
    if log_evidence_fail(successes, n, bar) >= need:
        return "fail"
    return "open"


def cases_needed(mean: float | None, bar: float, level: float, cap: int) -> int:
    """Smallest n (<= cap) at which a running mean like this one would be decided; cap if never."""
    if mean is None:
        return cap
    lo, hi = 1, cap
    if decide(mean * cap, cap, bar, level) == "open":
        return cap
    while lo < hi:  # the evidence grows with n at a fixed mean away from the bar
        mid = (lo + hi) // 2
        if decide(mean * mid, mid, bar, level) == "open":
            lo = mid + 1
        else:
            hi = mid
    return lo
