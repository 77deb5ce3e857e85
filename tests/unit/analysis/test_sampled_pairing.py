"""The pairing rule for a variant's k samples (ctxprobe.analysis.compare_samples): a case is
one pair valued at the mean of its measured samples, tested by the exact sign-flip test of
per-case differences; k = 1 on both sides is the McNemar path, unchanged."""

from __future__ import annotations

import math

import pytest

from ctxprobe.analysis.compare import mcnemar_exact
from ctxprobe.analysis.compare_samples import samples_test, case_value
from ctxprobe.analysis.variants import compare_variants
from ctxprobe.core.records import CaseRecord


def rec(variant: str, rep: int, score: float, *, sample: int | None = None, outcome: str | None = None,
        length: int = 1024, depth: float = 0.5) -> CaseRecord:
    base = f"niah~{variant}/L{length}/d{depth:g}/r{rep}"
    return CaseRecord(case_id=base if sample is None else f"{base}/s{sample}", family=f"niah~{variant}",
                      length=length, depth=depth, rep=rep, seed=100 + rep, prompt_hash=f"p{variant}{rep}",
                      token_count=length, needle_token_pos=None, realised_depth=None, expected=[str(rep)],
                      distractors=[], meta={}, messages=[], score=score,
                      outcome=outcome or ("correct" if score >= 1 else "wrong"))


def test_k1_on_both_sides_is_the_mcnemar_path_exactly() -> None:
    ref = [rec("a", r, s) for r, s in enumerate([1, 1, 1, 1, 1, 1, 0, 1, 1, 1])]
    scores = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1]
    plain = compare_variants(ref + [rec("b", r, s) for r, s in enumerate(scores)], order=["niah~a", "niah~b"])
    once = compare_variants(ref + [rec("b", r, s, sample=0) for r, s in enumerate(scores)],
                            order=["niah~a", "niah~b"])  # samples=1: one sample per case, /s0 ids
    assert plain[0].families == once[0].families and once[0].samples == (1, 1)
    pooled = plain[0].families[0].pooled
    assert not pooled.by_samples and (pooled.a_only, pooled.b_only) == (6, 1)
    assert pooled.p_value == mcnemar_exact(6, 1)


@pytest.mark.parametrize(("b", "c", "ties"), [(6, 1, 3), (0, 5, 0), (4, 4, 2), (9, 2, 5), (0, 0, 4)])
def test_the_sign_flip_of_0_1_differences_is_mcnemar(b: int, c: int, ties: int) -> None:
    diffs = [-1.0] * b + [1.0] * c + [0.0] * ties
    a_only, b_only, p, shift = samples_test(diffs)
    assert (a_only, b_only) == (b, c) and math.isclose(p, mcnemar_exact(b, c))
    assert math.isclose(shift, (c - b) / (b + c + ties))


def test_unequal_k_and_failed_samples_are_averaged_over_what_was_measured() -> None:
    ref = [rec("a", r, 1.0) for r in range(4)]
    hot = [
        *[rec("b", 0, s, sample=i) for i, s in enumerate([1, 0, 0])],  # 1/3
        *[rec("b", 1, s, sample=i) for i, s in enumerate([1, 1, 0])],  # 2/3
        rec("b", 2, 1.0, sample=0), rec("b", 2, 0.0, sample=1),
        rec("b", 2, 0.0, sample=2, outcome="error"),  # a harness failure: 1/2 of the two measured
        *[rec("b", 3, 0.0, sample=i, outcome="error") for i in range(3)],  # nothing measured: excluded
    ]
    (comparison,) = compare_variants(ref + hot, order=["niah~a", "niah~b"])
    assert comparison.samples == (1, 3) and comparison.n_paired == 3 and comparison.n_excluded == 1
    pooled = comparison.families[0].pooled
    assert pooled.by_samples and (pooled.a_only, pooled.b_only) == (3, 0)
    assert math.isclose(pooled.shift, ((1 / 3 - 1) + (2 / 3 - 1) + (1 / 2 - 1)) / 3)
    assert math.isclose(pooled.p_value, 2 / 2**3)  # every difference negative: the exact extreme
    assert math.isclose(pooled.mean_b or 0.0, (1 / 3 + 2 / 3 + 1 / 2) / 3)  # raw scores averaged the same way
    assert case_value(None, 0.99) == 0.0 and case_value((1.0, 0.0), 0.5) == 0.5


def test_the_direction_is_the_mean_difference_not_the_case_count() -> None:
    # two cases gain a full point, three lose a fifth: more cases worse (3 to 2), the mean better
    ref = [rec("a", r, 0.0) for r in (0, 1)] + [rec("a", r, 1.0) for r in (2, 3, 4)]
    hot = [rec("b", r, 1.0, sample=i) for r in (0, 1) for i in range(5)]
    hot += [rec("b", r, 1.0 if i else 0.0, sample=i) for r in (2, 3, 4) for i in range(5)]
    (comparison,) = compare_variants(ref + hot, order=["niah~a", "niah~b"])
    pooled = comparison.families[0].pooled
    assert (pooled.a_only, pooled.b_only) == (3, 2)
    assert math.isclose(pooled.shift, (1 + 1 - 0.2 * 3) / 5) and pooled.shift > 0
    assert pooled.b_better and not pooled.b_worse
