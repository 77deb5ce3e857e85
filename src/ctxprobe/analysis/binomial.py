"""Exact binomial bounds (pure Python, no scipy: checked against scipy in the tests): the
regularized incomplete beta function, its quantile, and one-sided Clopper–Pearson bounds.
Successes and trials may be fractional (partial scores, or an effective count of clustered
trials, :mod:`ctxprobe.analysis.clustered`)."""

from __future__ import annotations

import functools
import math

__all__ = ["beta_ppf", "betainc", "cp_lower", "cp_upper"]


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) (continued fraction, Numerical Recipes §6.4)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast only below the mean
        return 1.0 - betainc(b, a, 1.0 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return math.exp(log_front) * h / a


@functools.lru_cache(maxsize=1 << 16)
def beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b), by bisection on :func:`betainc` (monotone in x).
    Remembered per (q, a, b): a report, the adaptive rule and the interval checks ask for
    the same few bounds (whole successes of small n, a few levels) again and again, and each
    costs up to 100 evaluations of the continued fraction."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return (lo + hi) / 2


def cp_lower(successes: float, n: float, alpha: float) -> float:
    """One-sided Clopper–Pearson lower bound: P(bound > true rate) ≤ alpha."""
    if n == 0 or successes <= 0:
        return 0.0
    return beta_ppf(alpha, successes, n - successes + 1)


def cp_upper(successes: float, n: float, alpha: float) -> float:
    """One-sided Clopper–Pearson upper bound: P(bound < true rate) ≤ alpha."""
    if n == 0 or successes >= n:
        return 1.0
    return beta_ppf(1.0 - alpha, successes + 1, n - successes)
