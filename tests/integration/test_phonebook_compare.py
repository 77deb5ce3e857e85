"""`compare` and `check` on phone-book runs: paired needle by needle, and the verdict agrees
with the interval it prints (or says why not)."""

from __future__ import annotations

import pytest

from ctxprobe.analysis.compare import mcnemar_exact
from ctxprobe.report.compare_runs import check, compare_runs
from ctxprobe.analysis.compare_needles import signflip_p, smallest_p
from ctxprobe.store import iter_export
from ctxprobe.sweep.run import run_sweep
from ctxprobe.families.phonebook.task_grid import phonebook_spec


def _run(store, model: str, runs: int) -> str:
    spec = phonebook_spec(model=model, entries=[200], needles=[10], runs=runs, tokenizer="local")
    return run_sweep(spec, store, progress=False).run_id


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (5, 0), (3, 3), (7, 2), (12, 1), (9, 9), (16, 0)])
def test_signflip_of_single_needles_is_mcnemar_exact(b: int, c: int) -> None:
    diffs = [1.0] * b + [-1.0] * c + [0.0] * 4
    assert signflip_p(diffs) == pytest.approx(mcnemar_exact(b, c), abs=1e-12)


def test_signflip_boundaries() -> None:
    assert signflip_p([0.1] * 5) == pytest.approx(smallest_p(5)) == pytest.approx(2 / 32)
    assert signflip_p([0.1] * 4 + [-0.1]) == pytest.approx(12 / 32)  # |sum| ≥ 0.3: 5+5 patterns of 4+ one sign, +2
    assert signflip_p([]) == 1.0 and signflip_p([0.0, 0.0]) == 1.0
    many = signflip_p([0.2] * 30)  # Monte Carlo: never 0, at its floor
    assert 0 < many == pytest.approx(smallest_p(30))


def test_compare_and_check_pair_needles(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    good, bad = _run(store, "sim:perfect", 8), _run(store, "sim:blind-middle", 8)
    cmp = compare_runs(good, bad, store)
    (fam,) = cmp.families
    assert fam.family == "phonebook N=10" and cmp.n_paired == 8
    # needle by needle: the counts are needles right only in one run, counted here from the exports
    right = {run: {(r["case_id"], d["name"]): d["exact"] for r in iter_export(run, store) for d in r["detail"]["needles"]}
             for run in (good, bad)}
    lost = sum(right[good][k] and not right[bad][k] for k in right[good])
    assert fam.pooled.a_only == lost > 0 and fam.pooled.b_only == 0
    assert fam.pooled.mean_a == 1.0 and fam.pooled.diff == pytest.approx(-lost / 80)
    lo, hi = fam.mean_diff_ci
    assert hi < 0 and fam.pooled.significant and cmp.verdict().startswith("WORSE")
    assert "[the" not in cmp.verdict()  # test and interval agree: no explanation needed
    same = compare_runs(good, good, store)
    assert same.verdict().startswith("NO SIGNIFICANT") and same.families[0].mean_diff_ci == (0.0, 0.0)
    assert check(bad, good, store_path=store).exit_code == 1
    assert check(good, good, store_path=store).exit_code == 0


def test_too_few_books_is_said_not_hidden(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    good, bad = _run(store, "sim:perfect", 2), _run(store, "sim:blind-middle", 2)
    cmp = compare_runs(good, bad, store)
    (fam,) = cmp.families
    assert not fam.pooled.significant and fam.mean_diff_ci[1] < 0
    assert "NO SIGNIFICANT" in cmp.verdict() and "too few cases to call it" in cmp.verdict()


def test_cli_phonebook_defaults_to_post_and_json_report_has_every_metric(tmp_path) -> None:
    import json
    import subprocess
    import sys

    store = str(tmp_path / "pb.sqlite")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True,
                              timeout=300)

    proc = cli("phonebook", "--model", "sim:blind-middle", "--entries", "1000", "--needles", "10,100", "--runs", "3",
               "--store", store, "--no-plots", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "post" in proc.stdout and "robust" in proc.stdout
    run_id = json.loads(cli("runs", "--json", "--store", store).stdout)[0]["run_id"]
    rep = json.loads(cli("report", run_id, "--json", "--store", store).stdout)
    assert rep["spec"]["decoding"]["top_p"] == 0.95 and rep["spec"]["families"]["phonebook"]["method"] == "post"
    metrics = {(m["metric"], m["variant"], m["length"]): m for m in rep["phonebook"]["metrics"]}
    for name in ("CSI", "ADI", "NOI", "RRI", "LCRDS"):
        m = metrics[(name, "post", 1000)]
        assert m["value"] is not None and m["lo"] is not None and m["hi"] is not None and "undefined" in m
    for name in ("CSI", "ADI", "NOI", "RRS", "LCRDS"):
        assert metrics[(name, "robust", 1000)]["lo"] is not None
    assert ("MUC", "robust", None) in metrics
    assert metrics[("ADI", "post", 1000)]["value"] > 0.3  # the blind middle shows in the fit


def test_check_lines_count_needles(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    good, bad = _run(store, "sim:perfect", 8), _run(store, "sim:blind-middle", 8)
    result = check(bad, good, store_path=store)
    (cell,) = [t for t in result.responsible if t.length is None]
    assert cell.by_needle and cell.label == "phonebook N=10 (all cells)"
    assert any(f"{cell.a_only} needles lost, 0 gained" in line for line in result.lines())
    assert all(t.by_needle and " d=" not in t.label for t in result.comparison.families[0].cells)
