"""What the regression gate can see (ctxprobe.analysis.gate_power, analysis.gate): the
smallest detectable drop, INCONCLUSIVE, the per-length pools and Holm over all of them,
and ``check --plan``'s reps -- each checked against the exact tests by simulation of known
truth (a baseline that gets every pair right, a run that loses a known set of pairs)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ctxprobe.analysis.compare import CaseResult, RunCases, compare_cases
from ctxprobe.analysis.exact_tests import mcnemar_exact
from ctxprobe.analysis.gate import EXIT_INCONCLUSIVE, check_cases
from ctxprobe.analysis.gate_power import binom_sf, material_lost, needed_lost, plan_slice, reps_to_see

FAST = {"n_resamples": 5}


def _runs(grid: dict[str, tuple[list[int], list[float], int]], lost: dict[tuple[str, int, float], int] | None = None,
          gained: dict[tuple[str, int, float], int] | None = None) -> tuple[RunCases, RunCases]:
    """(baseline, run): the baseline gets every pair right except the ``gained`` ones (which the
    run gets right); the run loses ``lost`` pairs per (family, length, depth)."""
    base, run = {}, {}
    for family, (lengths, depths, reps) in grid.items():
        for length in lengths:
            for depth in depths:
                n_lost = (lost or {}).get((family, length, depth), 0)
                n_gained = (gained or {}).get((family, length, depth), 0)
                for r in range(reps):
                    cid = f"{family}/L{length}/d{depth:g}/r{r}"
                    a = 0.0 if r < n_gained else 1.0
                    b = 1.0 if r < n_gained else (0.0 if r >= reps - n_lost else 1.0)
                    base[cid] = CaseResult(cid, cid, family, length, depth, a, "correct" if a else "wrong")
                    run[cid] = CaseResult(cid, cid, family, length, depth, b, "correct" if b else "wrong")
    return RunCases("base", "m", base), RunCases("run", "m", run)


# -- the numbers against the exact test -----------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 3, 9, 10, 36, 100])
def test_needed_is_the_first_count_holm_rejects(m: int) -> None:
    d = needed_lost(m, 0.05)
    assert d is not None
    assert m * mcnemar_exact(d, 0) < 0.05 <= m * mcnemar_exact(d - 1, 0)


def test_needed_hand_computed() -> None:
    # m = 9: 2/2^9 * 9 = 0.035 < 0.05, 2/2^8 * 9 = 0.07: nine pairs
    assert needed_lost(9, 0.05) == 9
    # one test: 2/2^6 = 0.031 < 0.05 <= 2/2^5 = 0.0625
    assert needed_lost(1, 0.05) == 6
    assert needed_lost(36, 0.05) == 11


def test_binomial_tail_matches_scipy() -> None:
    from scipy.stats import binom

    for k, n, p in [(9, 120, 0.1), (0, 5, 0.3), (6, 6, 0.5), (30, 400, 0.05), (7, 6, 0.9)]:
        assert binom_sf(k, n, p) == pytest.approx(binom.sf(k - 1, n, p), abs=1e-12)


# -- the done-when case: all correct -> all wrong on 6 pairs a family ----------------------------


@pytest.mark.parametrize("families", [1, 4])
def test_all_correct_to_all_wrong_on_six_pairs_is_inconclusive_not_pass(families: int) -> None:
    grid = {f"f{i}": ([512, 1024], [0.0, 0.5, 1.0], 1) for i in range(families)}
    base, run = _runs(grid, lost={(f, ln, d): 1 for f in grid for ln in (512, 1024) for d in (0.0, 0.5, 1.0)})
    result = check_cases(run, base, **FAST)
    assert result.passed and not result.responsible  # nothing significant: 6 lost of 6 gives p = 0.031
    assert result.status == "INCONCLUSIVE" and result.exit_code == EXIT_INCONCLUSIVE == 4
    assert result.lines()[0].startswith("INCONCLUSIVE: ")
    assert sorted(result.blind) == sorted(grid)
    assert any("no drop can be significant" in line for line in result.lines())
    allowed = check_cases(run, base, allow_inconclusive=True, **FAST)
    assert allowed.exit_code == 0 and allowed.status == "INCONCLUSIVE" and "--allow-inconclusive" in allowed.lines()[0]


def test_a_slice_that_can_see_the_drop_fails_it() -> None:
    grid = {"niah": ([512, 1024], [0.0, 0.5, 1.0], 2)}  # 12 pairs: 12 lost of 12 gives p = 2/4096
    base, run = _runs(grid, lost={("niah", ln, d): 2 for ln in (512, 1024) for d in (0.0, 0.5, 1.0)})
    result = check_cases(run, base, max_drop=0.9, **FAST)
    assert result.status == "FAIL" and result.exit_code == 1


# -- INCONCLUSIVE's boundary: a material drop just out of reach --------------------------------------


def test_inconclusive_boundary_one_pair() -> None:
    # one family, one cell: 2 tests (cell and family pooled): 7 pairs lost needed
    grid = {"niah": ([512], [0.5], 100)}
    assert needed_lost(2, 0.05) == 7
    # --max-drop 0.05: a drop of 6 pairs (0.06) is material but cannot be significant
    assert material_lost(0.05, 100) == 6
    base, six = _runs(grid, lost={("niah", 512, 0.5): 6})
    missed = check_cases(six, base, max_drop=0.05, **FAST)
    assert missed.passed and missed.status == "INCONCLUSIVE"  # and so the gate says it was blind
    _, seven = _runs(grid, lost={("niah", 512, 0.5): 7})
    assert check_cases(seven, base, max_drop=0.05, **FAST).status == "FAIL"
    # --max-drop 0.06: the first material drop is 7 pairs, which the test flags: conclusive
    assert material_lost(0.06, 100) == 7
    assert check_cases(six, base, max_drop=0.06, **FAST).status == "PASS"  # 0.06 is tolerated, by choice
    assert check_cases(seven, base, max_drop=0.06, **FAST).status == "FAIL"


def test_a_drop_of_exactly_max_drop_is_tolerated_as_the_power_figures_count_it() -> None:
    # 9 of 180 lost is a drop of 0.05, which --max-drop 0.05 tolerates ("more than"); in floats
    # 1 - 171/180 = 0.050000000000000044, which the gate once counted as above it (and failed),
    # while its own power line said the first material drop was 10 pairs
    grid = {"niah": ([512], [0.5], 180)}
    assert material_lost(0.05, 180) == 10 and needed_lost(2, 0.05) == 7
    base, nine = _runs(grid, lost={("niah", 512, 0.5): 9})
    at = check_cases(nine, base, max_drop=0.05, **FAST)
    assert at.comparison.families[0].pooled.diff is not None and -at.comparison.families[0].pooled.diff > 0.05
    assert at.status == "PASS" and not at.responsible  # significant (9 >= 7) but not above --max-drop
    _, ten = _runs(grid, lost={("niah", 512, 0.5): 10})
    assert check_cases(ten, base, max_drop=0.05, **FAST).status == "FAIL"  # 10 of 180: 0.056 > 0.05


def test_a_significant_drop_the_gate_tolerates_reads_as_tolerated_under_its_pass() -> None:
    # 9 of 180 lost: significant (9 >= 7 needed for 2 tests) but a drop of 0.05, within --max-drop 0.05
    grid = {"niah": ([512], [0.5], 180)}
    base, nine = _runs(grid, lost={("niah", 512, 0.5): 9})
    lines = check_cases(nine, base, max_drop=0.05, **FAST).lines()
    assert lines[0].startswith("PASS: ")
    assert lines[-1].startswith("WORSE: run is significantly worse than base, within --max-drop 0.05 (")
    # a failing gate's drop is not within it; compare (no gate) words it as before
    _, ten = _runs(grid, lost={("niah", 512, 0.5): 10})
    failed = check_cases(ten, base, max_drop=0.05, **FAST)
    assert failed.status == "FAIL" and failed.lines()[-1].startswith("WORSE: run is significantly worse than base (")
    assert "max-drop" not in failed.comparison.verdict()
    # a mixed comparison: the tolerated drops say so too
    mixed = {"niah": ([512], [0.5], 180), "vartrack": ([512], [0.5], 180)}
    base, run = _runs(mixed, lost={("niah", 512, 0.5): 9}, gained={("vartrack", 512, 0.5): 9})
    res = check_cases(run, base, max_drop=0.05, **FAST)
    assert res.passed and "within --max-drop 0.05 and better in" in res.lines()[-1], res.lines()[-1]


def test_only_pairs_right_in_the_baseline_can_be_lost() -> None:
    # 20 pairs, 15 of them wrong in the baseline (the run gets those right: gained): 5 losable < 7 needed
    grid = {"niah": ([512], [0.5], 20)}
    base, run = _runs(grid, gained={("niah", 512, 0.5): 15})
    power = check_cases(run, base, max_drop=0.2, **FAST).power[0]
    # losing all 5 is a drop of 0.25 > 0.2 that no test can flag (7 needed)
    assert power.losable == 5 and power.smallest_drop is None and not power.sees(0.2)
    # no drop can exceed 0.5 when only 5 of 20 can be lost: nothing the gate could miss
    assert power.sees(0.5)


# -- pooling: a per-length test beside the cells, Holm over all ---------------------------------


def test_per_length_tests_only_where_they_are_tests_of_their_own() -> None:
    def tests(lengths: list[int], depths: list[float]) -> list[str]:
        base, run = _runs({"niah": (lengths, depths, 2)})
        return [t.label for t in compare_cases(base, run, **FAST).families[0].tests]

    assert tests([512, 1024], [0.0, 1.0]) == ["niah L=512 d=0%", "niah L=512 d=100%", "niah L=1K d=0%",
                                               "niah L=1K d=100%", "niah L=512 (all depths)",
                                               "niah L=1K (all depths)", "niah (all cells)"]
    assert tests([512], [0.0, 1.0]) == ["niah L=512 d=0%", "niah L=512 d=100%", "niah (all cells)"]  # = family
    assert tests([512, 1024], [0.5]) == ["niah L=512 d=50%", "niah L=1K d=50%", "niah (all cells)"]  # = cells


def test_a_drop_spread_over_one_lengths_depths_is_found_by_its_length_test() -> None:
    # 2 lengths x 3 depths x 4 reps: 9 tests, 9 pairs lost needed. 3 lost in each depth at 1K:
    # no cell (3 lost) can be significant; the length test (9 lost) is; the family test is
    # diluted by 3 pairs gained at 512 (9 vs 3: p = 0.146).
    grid = {"niah": ([512, 1024], [0.0, 0.5, 1.0], 4)}
    lost = {("niah", 1024, d): 3 for d in (0.0, 0.5, 1.0)}
    gained = {("niah", 512, 0.0): 3}
    base, run = _runs(grid, lost=lost, gained=gained)
    result = check_cases(run, base, max_drop=0.05, **FAST)
    assert [t.label for t in result.responsible] == ["niah L=1K (all depths)"]
    assert result.comparison.n_tests == 9
    # one pair fewer at one depth: 8 lost, below the 9 needed: nothing significant
    base, run = _runs(grid, lost={**lost, ("niah", 1024, 1.0): 2}, gained=gained)
    assert check_cases(run, base, max_drop=0.05, **FAST).comparison.significant_cells() == []


def test_holm_runs_over_every_family() -> None:
    # a drop of 9 pairs in one family of 9 tests is flagged; beside a second, unchanged family
    # (18 tests: 10 needed) the same drop is not
    one = {"niah": ([512, 1024], [0.0, 0.5, 1.0], 4)}
    lost = {("niah", 1024, 0.0): 4, ("niah", 1024, 0.5): 4, ("niah", 1024, 1.0): 1}
    base, run = _runs(one, lost=lost)
    assert check_cases(run, base, **FAST).status == "FAIL"
    two = {**one, "vartrack": ([512, 1024], [0.0, 0.5, 1.0], 4)}
    base, run = _runs(two, lost=lost)
    result = check_cases(run, base, **FAST)
    assert result.comparison.n_tests == 18 and needed_lost(18, 0.05) == 10
    assert result.passed and result.comparison.significant_cells() == []


# -- simulation of known truth: the smallest detectable drop is what the exact test detects -----


def test_smallest_detectable_drop_by_simulation() -> None:
    rng = random.Random(7)
    for _ in range(25):
        n_fam = rng.randint(1, 3)
        lengths = sorted(rng.sample([256, 512, 1024, 2048], rng.randint(1, 3)))
        depths = sorted(rng.sample([0.0, 0.25, 0.5, 0.75, 1.0], rng.randint(1, 3)))
        reps = rng.randint(1, 12)
        grid = {f"f{i}": (lengths, depths, reps) for i in range(n_fam)}
        base, _ = _runs(grid)
        power = check_cases(base, base, **FAST).power[0]
        n = power.n_pairs
        for d in sorted({power.needed - 1, power.needed} if power.needed else set()):
            if not 0 < d <= n:
                continue
            cells = [(ln, dp) for ln in lengths for dp in depths]
            lost: dict[tuple[str, int, float], int] = {}
            for _ in range(d):  # d pairs lost in f0, at random cells
                free = [c for c in cells if lost.get(("f0", *c), 0) < reps]
                c = rng.choice(free)
                lost[("f0", *c)] = lost.get(("f0", *c), 0) + 1
            base, run = _runs(grid, lost=lost)
            cmp = check_cases(run, base, max_drop=0.0, **FAST).comparison
            flagged = bool(cmp.significant_cells())
            assert flagged == (d >= power.needed), (grid, lost, power)
            if d == power.needed:
                assert power.smallest_drop == pytest.approx(d / n)
                assert cmp.families[0].pooled.significant  # the family test sees every lost pair


def test_plan_power_is_a_true_lower_bound_by_simulation() -> None:
    # each pair lost with probability drop, baseline all right: the gate fails at least as often
    # as plan_slice says, and at the reps it names for 80% at least 80% of the time (3 SE)
    rng = random.Random(3)
    plan = plan_slice(1, 2, 2, 3, drop=0.4, max_drop=0.05)
    assert plan.reps_power80 is not None

    def fail_rate(reps: int, sims: int = 300) -> float:
        fails = 0
        for _ in range(sims):
            lost: dict[tuple[str, int, float], int] = {}
            for c in [(512, 0.0), (512, 1.0), (1024, 0.0), (1024, 1.0)]:
                lost[("niah", *c)] = sum(rng.random() < 0.4 for _ in range(reps))
            base, run = _runs({"niah": ([512, 1024], [0.0, 1.0], reps)}, lost=lost)
            fails += check_cases(run, base, max_drop=0.05, **FAST).status == "FAIL"
        return fails / sims

    se = 0.5 / 300 ** 0.5
    assert fail_rate(3) >= plan.power - 3 * se
    assert fail_rate(plan.reps_power80) >= 0.8 - 3 * se


def test_plan_reps_boundaries() -> None:
    plan = plan_slice(1, 2, 3, 20, drop=0.1, max_drop=0.05)
    assert plan.m_tests == 9 and plan.needed == 9
    # spread: a drop of at least 0.1 of 6r pairs loses ceil(0.6 r) >= 9 -> r = 14 (8.4 -> 9 pairs);
    # one cell of r pairs: ceil(0.1 r) >= 9 -> r = 81 (at r = 80 it is exactly 8)
    assert plan.reps_family == 14 and plan.reps_cell == 81
    assert plan.reps_power80 is not None
    assert binom_sf(max(9, material_lost(0.05, 6 * plan.reps_power80)), 6 * plan.reps_power80, 0.1) >= 0.8
    r = plan.reps_power80 - 1
    assert binom_sf(max(9, material_lost(0.05, 6 * r)), 6 * r, 0.1) < 0.8
    assert plan_slice(1, 2, 3, 20, drop=0.05, max_drop=0.05).reps_family is None  # not above --max-drop
    # reps_to_see: every drop above 0.05 over 6 cells: floor(0.3 r) + 1 >= 9 -> r = 27
    assert reps_to_see(6, 9, 0.05) == 27
    assert material_lost(0.05, 6 * 26) < 9 <= material_lost(0.05, 6 * 27)


# -- through the command line, and the guide's slice ---------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ, "COLUMNS": "200"})


def test_check_plan_cli() -> None:
    proc = _cli("check", "--plan", "--lengths", "32k,64k", "--depths", "0,0.5,1", "--reps", "20", "--drop", "0.1")
    assert proc.returncode == 0, proc.stderr
    assert "9 tests in Holm's family" in proc.stdout and "--reps 14" in proc.stdout
    bad = _cli("check", "RUN", "--baseline", "B", "--reps", "3")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--plan" in bad.stderr
    help_text = _cli("check", "--help").stdout
    assert "4 INCONCLUSIVE" in help_text and "--allow-inconclusive" in help_text


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "ci-regression-gate.md"


def _guide_slice() -> dict[str, object]:
    block = re.search(r"```yaml\n(# ci/regression-slice.yaml\n.*?)```", GUIDE.read_text(), re.S)
    assert block, "the guide's regression slice is gone"
    return yaml.safe_load(block.group(1))


def test_guide_slice_sees_its_max_drop() -> None:
    s = _guide_slice()
    plan = plan_slice(len(s["families"]), len(s["lengths"]), len(s["depths"]), int(s["reps"]), drop=0.1)
    assert plan.needed is not None
    n = len(s["lengths"]) * len(s["depths"]) * int(s["reps"])
    assert plan.needed <= material_lost(0.05, n)  # every drop above --max-drop 0.05 can be flagged


def test_guide_slice_fails_a_modest_drop(tmp_path) -> None:
    """The guide's slice (its families, depths, reps and seed; short lengths for speed), run
    with a model that answers everything and one that misses each case with probability 0.12
    (sim:decay's noise, drawn from the prompt): a drop of about a tenth, not a collapse, and
    check must FAIL it. (At 180 pairs P(fewer than the 10 lost pairs it needs) is ~3e-4.)"""
    from ctxprobe.spec import make_spec
    from ctxprobe.sweep.run import run_sweep

    s = _guide_slice()
    grid = {k: s[k] for k in ("families", "depths", "reps", "seed")}
    store = tmp_path / "s.sqlite"
    base = {**grid, "tokenizer": "local", "lengths": [512, 1024]}
    good = run_sweep(make_spec({**base, "model": "sim:perfect"}), store, progress=False).run_id
    bad = run_sweep(make_spec({**base, "model": "sim:decay?cliff=100000&noise=0.12"}), store, progress=False).run_id
    proc = _cli("check", bad, "--baseline", good, "--store", str(store), "--max-drop", "0.05")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("FAIL: ")
    family = re.search(r"niah \(all cells\): 1\.00 -> (0\.\d+) \(drop (0\.\d+)", proc.stdout)
    assert family, proc.stdout
    assert 0.05 < float(family.group(2)) < 0.2  # a modest drop, not all wrong
    same = _cli("check", good, "--baseline", good, "--store", str(store))
    assert same.returncode == 0 and same.stdout.startswith("PASS: "), same.stdout
