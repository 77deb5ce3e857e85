"""A 95% interval for a proportion whose trials come in clusters (needles asked in one
prompt): the phone book asks N needles of the same book in one request, so its needles
are not independent coin flips — a prompt the model reads badly fails many at once.

A Wilson interval over all needles treats them as independent and is far too narrow when
they are not: measured in ``benchmarks/coverage_phonebook_recall.py``, it covers the true
rate as rarely as 12% of the time for strongly clustered prompts. Here instead:

* the design effect ``deff`` (Kish) is the variance of the clustered ratio estimate over
  the binomial variance, the former taken at its one-sided 95% *upper* confidence bound
  (sample variance × (k−1)/χ²₀.₀₅,ₖ₋₁ for k clusters), so few clusters cannot make it
  look small by luck; it is at least 1 (never narrower than independent trials) and at
  most the mean cluster size (every needle of a prompt the same: one trial per prompt);
* with one cluster, or every cluster at the same proportion 0 or 1, the spread cannot be
  seen and ``deff`` is the mean cluster size;
* the interval is the exact (Clopper–Pearson) interval for ``p·n/deff`` successes out of
  ``n/deff`` trials.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ctxprobe.analysis.binomial import cp_lower, cp_upper


def _gamma_p(a: float, x: float) -> float:
    """The regularized lower incomplete gamma function P(a, x), by its power series."""
    if x <= 0:
        return 0.0
    term = total = 1.0 / a
    n = 0
    while abs(term) > 1e-16 * abs(total) and n < 10_000:
        n += 1
        term *= x / (a + n)
        total += term
    return min(1.0, total * math.exp(-x + a * math.log(x) - math.lgamma(a)))


def chi2_ppf(q: float, df: int) -> float:
    """The q-quantile of the chi-square distribution with ``df`` degrees of freedom."""
    if not 0 < q < 1 or df < 1:
        raise ValueError(f"chi2_ppf needs 0 < q < 1 and df >= 1, got q={q}, df={df}")
    lo, hi = 0.0, max(10.0, 10.0 * df)
    while _gamma_p(df / 2, hi / 2) < q:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _gamma_p(df / 2, mid / 2) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2


def design_effect(successes: Sequence[float], sizes: Sequence[int], alpha: float = 0.05, *,
                  pseudo: bool = False) -> float:
    """Kish's design effect of clustered trials at its one-sided ``1 − alpha`` upper bound,
    clamped to [1, mean cluster size]. ``pseudo``: one pseudo-cluster of the mean size at
    proportion 1/2 joins the spread (as Agresti–Coull add pseudo-observations), so a
    proportion near 0 or 1 whose rare deviant clusters happen to be missing does not look
    unclustered; it adds nothing at 1/2."""
    pairs = [(float(y), int(m)) for y, m in zip(successes, sizes, strict=True) if m > 0]
    k = len(pairs)
    if k == 0:
        return 1.0
    n = sum(m for _, m in pairs)
    mean_size = n / k
    p = sum(y for y, _ in pairs) / n
    binomial = p * (1 - p) / n
    if k < 2 or binomial <= 0:
        return mean_size
    spread = sum((y - p * m) ** 2 for y, m in pairs)
    if pseudo:
        spread += ((0.5 - p) * mean_size) ** 2
    clustered = k / (k - 1) * spread / (n * n)
    upper = clustered * (k - 1) / chi2_ppf(alpha, k - 1)
    return min(mean_size, max(1.0, upper / binomial))


def clustered_interval(successes: Sequence[float], sizes: Sequence[int],
                       alpha: float = 0.05, *, pseudo: bool = False) -> tuple[float, float, float]:
    """(p, lo, hi): the pooled proportion and its two-sided ``1 − alpha`` interval, for
    ``successes[i]`` out of ``sizes[i]`` trials in cluster ``i`` (``pseudo``: see
    :func:`design_effect`)."""
    n = sum(int(m) for m in sizes)
    if n == 0:
        return (float("nan"), 0.0, 1.0)
    p = sum(float(y) for y in successes) / n
    n_eff = n / design_effect(successes, sizes, alpha, pseudo=pseudo)
    return (p, cp_lower(p * n_eff, n_eff, alpha / 2), cp_upper(p * n_eff, n_eff, alpha / 2))
