"""Paired comparison and the regression gate (ctxprobe.analysis.compare, analysis.gate, report.compare_runs)."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from ctxprobe.analysis.compare import CaseResult, RunCases, compare_cases, holm, mcnemar_exact, pair_runs
from ctxprobe.analysis.gate import check_cases
from ctxprobe.report.compare_runs import check, compare_runs
from ctxprobe.errors import CtxprobeError

# -- the statistics against references ----------------------------------------------------------


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (0, 5), (1, 6), (3, 3), (9, 0), (12, 4), (40, 25),
                                      (7, 30), (300, 260)])
def test_mcnemar_exact_matches_scipy_binomtest(b: int, c: int) -> None:
    ref = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    assert mcnemar_exact(b, c) == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_mcnemar_hand_computed() -> None:
    # b=1, c=6: n=7; P(X<=1) = (C(7,0)+C(7,1))/2^7 = 8/128; two-sided = 16/128 = 0.125
    assert mcnemar_exact(1, 6) == 0.125
    # b=0, c=9: 2 * 1/512 = 0.00390625
    assert mcnemar_exact(0, 9) == 0.00390625


def test_holm_hand_computed() -> None:
    # sorted: 0.01*4 = 0.04; 0.03*3 = 0.09; 0.04*2 = 0.08 -> monotone 0.09; 0.2*1 = 0.2
    assert holm([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.09, 0.09, 0.2])
    # step-down: an adjusted p never falls below a smaller p's adjusted one (0.5*2 = 1.0 > 0.9)
    assert holm([0.5, 0.9]) == [1.0, 1.0]


# -- pairing on plain records ------------------------------------------------------------------------


def _run(run_id: str, scores: dict[tuple[int, float], list[float | None]], prompt: str = "p",
         outcome: str = "correct") -> RunCases:
    cases = {}
    for (length, depth), values in scores.items():
        for rep, s in enumerate(values):
            cid = f"niah/L{length}/d{depth:g}/r{rep}"
            out = outcome if s is not None else "error"
            cases[cid] = CaseResult(cid, f"{prompt}-{cid}", "niah", length, depth, s, out)
    return RunCases(run_id, "sim", cases)


GRID = [(512, 0.0), (512, 1.0), (2048, 0.0), (2048, 1.0)]


def test_refuses_runs_with_different_prompts_naming_the_case() -> None:
    a = _run("A", {k: [1.0] * 3 for k in GRID})
    b = _run("B", {k: [1.0] * 3 for k in GRID}, prompt="other")
    with pytest.raises(CtxprobeError, match=r"different prompts for case niah/L512/d0/r0") as err:
        compare_cases(a, b)
    assert "\n" not in str(err.value)


def test_refuses_runs_without_shared_cases() -> None:
    a = _run("A", {(512, 0.0): [1.0]})
    b = _run("B", {(1024, 0.0): [1.0]})
    with pytest.raises(CtxprobeError, match="share no case"):
        compare_cases(a, b)


def test_harness_failures_are_excluded_pairwise_and_extra_cases_counted() -> None:
    a = _run("A", {(512, 0.0): [1.0, 1.0, None, 0.0]})
    b = _run("B", {(512, 0.0): [1.0, None, 1.0, 1.0, 1.0]})
    pairs, excluded, only_a, only_b = pair_runs(a, b)
    assert len(pairs) == 2 and excluded == 2 and only_a == 0 and only_b == 1


def test_partial_credit_is_not_a_success() -> None:
    a = _run("A", {(512, 0.0): [1.0] * 10})
    b = _run("B", {(512, 0.0): [0.5] * 10}, outcome="partial")
    cmp = compare_cases(a, b, n_resamples=100)
    cell = cmp.families[0].cells[0]
    assert (cell.a_only, cell.b_only) == (10, 0)
    assert cmp.families[0].mean_diff == pytest.approx(-0.5)


# -- the gate on plain records -----------------------------------------------------------------------


def test_gate_passes_equal_and_better_runs_and_fails_a_worse_one() -> None:
    base = _run("base", {k: [1.0] * 20 for k in GRID})
    assert check_cases(base, base, n_resamples=100).passed
    worse_scores = {k: [1.0] * 20 for k in GRID}
    worse_scores[(2048, 1.0)] = [0.0] * 14 + [1.0] * 6
    worse = _run("worse", worse_scores)
    result = check_cases(worse, base, n_resamples=100)
    assert not result.passed and result.exit_code == 1
    labels = [t.label for t in result.responsible]
    assert "niah L=2K d=100%" in labels
    assert all("512" not in lab for lab in labels)
    assert any("niah L=2K d=100%" in line for line in result.lines())
    assert check_cases(base, worse, n_resamples=100).passed  # better than baseline: never fails


def test_gate_ignores_significant_drops_smaller_than_max_drop() -> None:
    base = _run("base", {(512, 0.0): [1.0] * 400})
    run = _run("run", {(512, 0.0): [1.0] * 388 + [0.0] * 12})  # 3% drop, p = 2/2^12
    strict = check_cases(run, base, max_drop=0.01, n_resamples=50)
    assert not strict.passed
    assert check_cases(run, base, max_drop=0.05, n_resamples=50).passed


def test_gate_rejects_bad_max_drop() -> None:
    base = _run("base", {(512, 0.0): [1.0]})
    with pytest.raises(CtxprobeError, match="max-drop"):
        check_cases(base, base, max_drop=2.0)


# -- real runs of sim models in a store ------------------------------------------------------------

SPEC = {"tokenizer": "local", "lengths": [512, 1536], "depths": [0.0, 0.5, 1.0], "reps": 12}
HEALTHY = "sim:decay?cliff=1200&width=1000&noise=0.1"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from ctxprobe.spec import make_spec
    from ctxprobe.sweep.run import run_sweep

    store = tmp_path_factory.mktemp("cmp") / "s.sqlite"

    def sweep(model: str, **extra) -> str:
        return run_sweep(make_spec({**SPEC, "model": model, **extra}), store, progress=False).run_id

    ids = {
        "a": sweep(f"{HEALTHY}&seed=1"),
        "b": sweep(f"{HEALTHY}&seed=2"),  # same model, other noise draws
        "b3": sweep(f"{HEALTHY}&seed=3"),
        "b4": sweep(f"{HEALTHY}&seed=4"),
        "worse": sweep("sim:decay?cliff=256&width=256&noise=0.1&seed=1"),
        "other_cases": sweep(f"{HEALTHY}&seed=1", seed=7, lengths=[512], depths=[0.5], reps=2),
    }
    return store, ids


def test_same_model_other_noise_seed_is_not_significantly_different(runs) -> None:
    store, ids = runs
    cmp = compare_runs(ids["a"], ids["b"], store)
    assert cmp.n_paired == 72
    assert not cmp.significant_cells()
    assert cmp.verdict().startswith("NO SIGNIFICANT DIFFERENCE")
    # a 95% interval for a true difference of 0 misses it in 1 draw of 20 (seed 2 here is
    # one such draw on today's prompts): over three independent noise seeds it covers 0 in
    # at least two (two or more misses: probability ~0.7%)
    covered = []
    for other in ("b", "b3", "b4"):
        c = compare_runs(ids["a"], ids[other], store)
        assert not c.significant_cells() and c.verdict().startswith("NO SIGNIFICANT DIFFERENCE")
        lo, hi = c.families[0].mean_diff_ci
        covered.append(lo <= 0.0 <= hi)
    assert sum(covered) >= 2, covered


def test_degraded_model_is_found_worse(runs) -> None:
    store, ids = runs
    cmp = compare_runs(ids["a"], ids["worse"], store)
    assert cmp.verdict().startswith("WORSE")
    fam = cmp.families[0]
    assert fam.mean_diff_ci[1] < 0
    assert fam.effective_a == 512 and fam.effective_b is None
    lo, hi = fam.effective_diff_ci
    assert lo == -512 and hi <= 0


def test_check_on_stored_runs(runs) -> None:
    store, ids = runs
    assert check(ids["a"], ids["a"], store_path=store).passed
    assert check(ids["b"], ids["a"], store_path=store).passed
    failed = check(ids["worse"], ids["a"], store_path=store)
    assert not failed.passed
    assert {t.length for t in failed.responsible if t.length} == {512, 1536}


def test_compare_refuses_runs_built_from_other_cases(runs) -> None:
    store, ids = runs
    with pytest.raises(CtxprobeError, match=r"different prompts for case niah/L512/d0.5/r0"):
        compare_runs(ids["a"], ids["other_cases"], store)
    with pytest.raises(CtxprobeError, match="no run"):
        compare_runs(ids["a"], "ffffffffffff", store)
