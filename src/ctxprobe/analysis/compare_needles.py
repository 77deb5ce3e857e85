"""Pairing multi-needle cases needle by needle, and their paired test: any family whose
scorer leaves one verdict per needle in ``detail["needles"]`` (the phone book's).

A phone-book case asks N names at once. McNemar on whole cases (full credit or not) says
nothing once N ≥ 10: almost no reply gets every needle right in either run, so no pair is
discordant and every test reads "no difference" beside a clearly non-zero mean difference.
Here each needle is paired with the same needle (same book, same name) of the other run;
the counts shown are needles right in one run only. The needles of one reply are not
independent (one reply, one attention pattern), so the test treats the *case* as the unit:
an exact sign-flip (permutation) test of the per-case differences in the share of needles
right. With one needle per case it is exactly McNemar's exact test (the sign test of the
discordant pairs), so the two families of results read the same way.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ctxprobe.core.outcome import Outcome
from ctxprobe.core.records import CaseRecord

#: Up to this many non-zero differences the test enumerates every sign pattern.
EXACT_LIMIT = 16
MONTE_CARLO_DRAWS = 20000


def needle_verdicts(rec: CaseRecord, family: str | None = None) -> tuple[str, tuple[tuple[str, bool], ...]] | None:
    """(family label per N, (name, right) per needle) of a scored record whose detail lists
    its needles' verdicts (``detail["needles"]``: name and outcome each), or None; ``family``:
    the label to read it under (a variant's base family; default: its own). The label is
    the family and the case's needle count (``meta["needles"]``; a shard holds some).

    "Right" is the verdict the case score was computed from: the exact match under
    ``method: post`` (the phone-book post's rule), the lenient outcome otherwise."""
    detail = rec.detail or {}
    needles = detail.get("needles")
    if not needles:
        return None
    exact = detail.get("method") == "post"
    verdicts = tuple((d["name"], bool(d.get("exact")) if exact else d["outcome"] == Outcome.CORRECT) for d in needles)
    asked = (rec.meta or {}).get("needles")
    return f"{family or rec.family} N={asked if isinstance(asked, int) else len(needles)}", verdicts


def signflip_p(diffs: Sequence[float], seed: int = 0) -> float:
    """Two-sided sign-flip test of paired differences (H0: A and B exchangeable per case).

    Exact over all 2^m sign patterns of the m non-zero differences up to ``EXACT_LIMIT``,
    else a seeded Monte Carlo estimate ``(k + 1) / (draws + 1)`` (never 0). No non-zero
    difference is no evidence: 1."""
    d = np.array([x for x in diffs if abs(x) > 1e-12], dtype=float)
    m = len(d)
    if m == 0:
        return 1.0
    observed = abs(float(d.sum())) - 1e-9
    if m <= EXACT_LIMIT:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=m)))
        return float(np.mean(np.abs(signs @ d) >= observed))
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(MONTE_CARLO_DRAWS, m))
    k = int(np.sum(np.abs(signs @ d) >= observed))
    return (k + 1) / (MONTE_CARLO_DRAWS + 1)


def smallest_p(n_cases: int) -> float:
    """The smallest p-value the sign-flip test can give with this many paired cases."""
    if n_cases == 0:
        return 1.0
    if n_cases <= EXACT_LIMIT:
        return 2.0 / 2**n_cases  # all differences of one sign (and its mirror image)
    return 1.0 / (MONTE_CARLO_DRAWS + 1)


def discordant(a: Sequence[tuple[str, bool]], b: Sequence[tuple[str, bool]]) -> tuple[int, int]:
    """(needles right only in A, needles right only in B) of one paired case."""
    return (sum(x and not y for (_, x), (_, y) in zip(a, b)), sum(y and not x for (_, x), (_, y) in zip(a, b)))


def same_needles(a: Sequence[tuple[str, bool]], b: Sequence[tuple[str, bool]]) -> bool:
    return len(a) == len(b) and all(x[0] == y[0] for x, y in zip(a, b))



def agreement_note(ci: tuple[float, float], significant: bool, n_pairs: int, confidence: float) -> str:
    """Say so when a family's test and its printed interval point different ways (at small n
    a percentile bootstrap is narrower than an exact test allows)."""
    excludes = ci[0] > 0 or ci[1] < 0
    if excludes == significant:
        return ""
    if excludes:
        return (f" [the {confidence * 100:g}% bootstrap interval excludes 0 but the exact test on {n_pairs} paired "
                f"cases is not significant after Holm (with sign flips the smallest attainable p is "
                f"{smallest_p(n_pairs):.2g}): too few cases to call it; the interval is approximate at this size]")
    return (f" [the exact test is significant but the {confidence * 100:g}% bootstrap interval touches 0: "
            "a borderline difference]")
