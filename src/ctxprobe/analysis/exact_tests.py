"""The exact paired tests of :mod:`ctxprobe.analysis.compare` and the gate: McNemar's exact
test and Holm's step-down correction (store-free, integer arithmetic where it can be)."""

from __future__ import annotations

import math

__all__ = ["holm", "mcnemar_exact"]


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of min(b, c) of b + c at p = 0.5.

    Equals ``scipy.stats.binomtest(b, b + c, 0.5).pvalue``: the null distribution is
    symmetric, so "as or less likely than observed" is twice the smaller tail (capped at 1).
    No discordant pair is no evidence: p = 1. Integer arithmetic keeps it exact at any n.
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be >= 0")
    n = b + c
    if n == 0 or b == c:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def holm(p_values: list[float]) -> list[float]:
    """Holm step-down adjusted p-values (reject i when adjusted[i] < alpha)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
