"""Synthetic vs natural finds natural profiles by the registry family behind a label (not
by the name ``documents``) and compares like with like: a prompt variant's or a reasoning
budget's natural curve against the same variant's and budget's synthetic curves only.

End to end on ``sim:reasoner`` (budget 0: it sees like ``blind-middle``, so a needle or an
answer at depth 0.5 is missed at every length; budget 1k: it thinks through every prompt
of 1K–2K and answers right): a run of ``mydocs`` (``family: documents``) and ``niah`` at
budgets 0 and 1k. Each budget's natural and synthetic curves agree (0 and 0, 1 and 1);
a pair across budgets (0 against 1 over 8 cases a length) would differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.analysis.grid import LengthStat, Profile
from ctxprobe.analysis.natural import is_natural_family, natural_vs_synthetic, read_label, spec_family_names
from ctxprobe.cli import main
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "natural"


def _profile(label: str, mean: float = 1.0) -> Profile:
    return Profile(label, 0.856, 1024, [LengthStat(label, 1024, 10, mean, 0.0, 1.0)], [])


def test_labels_are_read_by_their_family_and_paired_by_variant_and_budget() -> None:
    names = {"mydocs": "documents", "mydocs~end": "documents", "niah~end": "niah"}
    assert read_label("mydocs~end@think1k", names) == read_label("documents~end@think1k")
    curve = read_label("mydocs~end@think1k", names)
    assert (curve.family, curve.variant, curve.budget) == ("documents", "end", "1k")
    assert (read_label("niah").variant, read_label("niah").budget) == (None, None)
    # the family's own flag decides, not the label: nolima's needles are planted (synthetic)
    assert is_natural_family("documents") and not is_natural_family("niah")
    assert not is_natural_family("nolima") and not is_natural_family("no-such-family")
    assert spec_family_names({"families": {"mydocs": {"family": "documents"}, "niah": {}}}) == {
        "mydocs": "documents", "niah": "niah"}
    profiles = [_profile(label) for label in ("mydocs~end@think1k", "mydocs~end@think0", "niah~end@think1k",
                                              "niah~end@think0", "niah~start@think1k", "niah@think1k",
                                              "nolima~end@think1k")]
    found = [(a.natural, a.synthetic) for a in natural_vs_synthetic(profiles, names=names)]
    assert found == [("mydocs~end@think1k", "niah~end@think1k"), ("mydocs~end@think1k", "nolima~end@think1k"),
                     ("mydocs~end@think0", "niah~end@think0")]
    # without the spec's names a label is read as its family's name: "mydocs" is unknown, so synthetic
    assert natural_vs_synthetic(profiles) == []


@pytest.fixture(scope="module")
def budget_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    store = tmp_path_factory.mktemp("budgets") / "s.sqlite"
    docs = {"family": "documents", "docs": str(EXAMPLE / "docs"), "qa": str(EXAMPLE / "qa.jsonl"),
            "filler": "documents"}
    spec = make_spec({"model": "sim:reasoner", "tokenizer": "local", "lengths": "1k,2k", "depths": "0.5", "reps": 8,
                      "reasoning_budgets": "0,1k", "families": {"mydocs": docs, "niah": {}}})
    return store, run_sweep(spec, store, progress=False).run_id


LIKE = [("mydocs@think0", "niah@think0"), ("mydocs@think1k", "niah@think1k")]


def test_each_budget_is_compared_with_the_same_budget_in_json_and_terminal(
        budget_run: tuple[Path, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    store, run_id = budget_run
    assert main(["report", run_id, "--store", str(store), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["natural_vs_synthetic"]
    assert [(e["natural"], e["synthetic"]) for e in found] == LIKE
    assert all(e["agree"] for e in found)
    assert [[c["natural_mean"] for c in e["lengths"]] for e in found] == [[0.0, 0.0], [1.0, 1.0]]
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["report", "--details", run_id, "--store", str(store), "--no-plots"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for nat, syn in LIKE:
        assert f"synthetic vs natural: {nat} vs {syn}" in text
        assert f"{nat} vs {syn}: agree: no length differs" in text
    assert "mydocs@think0 vs niah@think1k" not in text and "mydocs@think1k vs niah@think0" not in text
    # the default report says each pair's verdict once, in one line, without the tables
    assert main(["report", run_id, "--store", str(store), "--no-plots"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for nat, syn in LIKE:
        assert f"{nat} vs {syn}: agree: no length differs" in text
        assert f"synthetic vs natural: {nat} vs {syn}" not in text
    assert "mydocs@think0 vs niah@think1k" not in text


def test_each_budget_is_compared_with_the_same_budget_in_html_and_decide(
        budget_run: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id = budget_run
    page = tmp_path / "page.html"
    assert main(["report", run_id, "--store", str(store), "--html", str(page), "--no-plots"]) == 0
    html = page.read_text()
    assert "Synthetic vs natural" in html
    for nat, syn in LIKE:
        assert f"{nat} vs {syn} (sim:reasoner · {run_id}): agree: no length differs" in html
    assert "mydocs@think0 vs niah@think1k" not in html
    capsys.readouterr()
    assert main(["decide", run_id, "--json", "--store", str(store)]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["runs"]
    assert [(e["natural"], e["synthetic"]) for e in entry["natural_vs_synthetic"]] == LIKE
    assert all(e["agree"] for e in entry["natural_vs_synthetic"])


def test_runs_of_other_budgets_are_not_compared_and_the_report_says_so(
        budget_run: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, run_id = budget_run
    plain = run_sweep(make_spec({"model": "sim:reasoner", "tokenizer": "local", "lengths": "1k,2k", "depths": "0.5",
                                 "reps": 8, "families": {"niah": {}}}), store, progress=False).run_id
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["report", "--details", run_id, plain, "--store", str(store), "--no-plots"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    said = (f"note: mydocs@think0, mydocs@think1k ({run_id}) not compared across runs: no other run holds a "
            "synthetic curve of the same prompt variant and reasoning budget (theirs: niah)")
    assert said in text and f"({run_id}) vs niah ({plain})" not in text
    page = tmp_path / "page.html"
    assert main(["report", run_id, plain, "--store", str(store), "--html", str(page), "--no-plots"]) == 0
    assert said in page.read_text().replace("&#39;", "'")
