"""Confidence intervals for accuracies.

Cells of a context sweep are small (a handful of repetitions each), and accuracies sit
near 0 or 1 exactly where it matters. The Wilson score interval stays inside [0, 1] and
keeps sensible coverage there, where the normal (Wald) interval collapses to a point.
"""

from __future__ import annotations

import math

#: Two-sided 95% normal quantile, the same constant scipy uses (``ndtri(0.975)``).
Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n`` trials.

    ``successes`` may be fractional: with partial credit (e.g. a multi-value needle scored
    as recall) the sum of scores plays the role of the success count. That is an
    approximation -- a score of 0.5 carries less variance than a coin flip -- but it errs
    on the wide side, which is the safe side for a "does the model still work here" bar.

    ``n == 0`` means nothing was measured, so the interval is the whole range (0, 1).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if n == 0:
        return (0.0, 1.0)
    # Clamp rather than fail: rounding in a sum of fractional scores can overshoot by ulps.
    p = min(max(successes / n, 0.0), 1.0)
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denom
    # At p = 0 or p = 1 one bound is exactly the boundary; computing it leaves ulps of noise.
    lo = 0.0 if p == 0.0 else max(0.0, centre - half)
    hi = 1.0 if p == 1.0 else min(1.0, centre + half)
    return (lo, hi)
