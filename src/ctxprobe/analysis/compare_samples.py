"""Pairing sampled cases: a prompt variant that sends each case k times (``samples=k``).

The k samples of a case hold one prompt, so they are not k independent cases: the *case*
is the unit, as for the phone book's needles. A case's value is the mean of its measured
samples' values (per sample: 1 for full credit, else 0; the share of needles right for a
multi-needle case), and a cell's test is the exact sign-flip (permutation) test of the
per-case differences of those means (:func:`ctxprobe.analysis.compare_needles.signflip_p`),
which handles a different k on the two sides (k = 1 against k = 5) and cases where some
samples failed (their mean is over the samples measured). When every case of a family is
sent once on both sides, nothing here applies: McNemar's exact test (or the per-needle
sign-flip) is used, unchanged; with k = 1 the two tests agree anyway (a sign test of the
discordant pairs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ctxprobe.analysis.compare_needles import signflip_p

Samples = tuple[float, ...]

_FULL_CREDIT = 1.0 - 1e-9
_ZERO = 1e-12


def is_sampled(sides: Iterable[tuple[Samples | None, Samples | None]]) -> bool:
    """Whether some pair holds more than one sample on a side (then the whole family is
    tested on per-case means)."""
    return any(len(a or ()) > 1 or len(b or ()) > 1 for a, b in sides)


def case_value(samples: Samples | None, score: float) -> float:
    """A pair side's value: the mean of its samples; full credit (1/0) when sent once."""
    if samples:
        return math.fsum(samples) / len(samples)
    return 1.0 if score >= _FULL_CREDIT else 0.0


def sample_value(score: float, needles: Sequence[tuple[str, bool]] | None) -> float:
    """One sample's value: the share of needles right, else full credit (1) or not (0)."""
    if needles:
        return sum(1 for _, right in needles if right) / len(needles)
    return 1.0 if score >= _FULL_CREDIT else 0.0


def samples_test(diffs: Sequence[float]) -> tuple[int, int, float, float]:
    """(cases better in A, cases better in B, sign-flip p, mean difference B - A) of the
    per-case mean differences B - A."""
    n = len(diffs)
    return (sum(1 for d in diffs if d < -_ZERO), sum(1 for d in diffs if d > _ZERO), signflip_p(diffs),
            math.fsum(diffs) / n if n else 0.0)
