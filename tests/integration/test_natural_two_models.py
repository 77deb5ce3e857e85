"""Synthetic vs natural across runs of two models says so on every surface: the terminal
block's note ("… this compares two models"), the HTML section's verdict line and
``report --json``'s ``natural_vs_synthetic_across_runs`` (``same_model``, ``note``); a pair of
runs of one model carries no such note. Sims with known cliffs (``sim:decay``)."""

from __future__ import annotations

import html as htmllib
import json
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "natural"
EARLY, LATE = "sim:decay?cliff=1500&width=0", "sim:decay?cliff=3000&width=0"


def _run(store: Path, model: str, families: dict) -> str:
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": "1k,2k,4k", "depths": "0.2,0.8", "reps": 5,
                      "families": families})
    return run_sweep(spec, store, progress=False).run_id


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    store = tmp_path_factory.mktemp("two-models") / "s.sqlite"
    docs = {"documents": {"docs": str(EXAMPLE / "docs"), "qa": str(EXAMPLE / "qa.jsonl"), "filler": "documents"}}
    natural = _run(store, EARLY, docs)
    same = _run(store, EARLY, {"niah": {}})  # the natural run's own model
    other = _run(store, LATE, {"niah": {}})  # another model
    return store, natural, same, other


def _note(natural: str, other: str) -> str:
    return f"note: {natural} is a run of {EARLY}, {other} of {LATE}: this compares two models"


def test_html_names_the_pair_across_two_models(runs: tuple[Path, str, str, str], tmp_path: Path) -> None:
    store, natural, same, other = runs
    page = tmp_path / "page.html"
    assert main(["report", natural, same, other, "--store", str(store), "--html", str(page), "--no-plots"]) == 0
    text = htmllib.unescape(page.read_text())
    two = f"documents ({natural}) vs niah ({other}): disagree: natural lower at 2K"
    one = f"documents ({natural}) vs niah ({same}): agree: no length differs"
    assert two in text and one in text
    assert _note(natural, other) in text
    # the note follows the two-model pair's verdict, never the one-model pair's
    assert (f"{two} (two-proportion test, Bonferroni alpha 0.05 over 3 lengths); effective length 1K vs 2K — "
            f"{_note(natural, other)}") in text
    assert f"{natural} is a run of {EARLY}, {same} of" not in text
    # the comparison table names the runs of each pair
    assert f"<td>documents ({natural}) vs niah ({other})</td>" in page.read_text()


def test_json_of_several_runs_carries_the_cross_run_pairs_with_their_models(
        runs: tuple[Path, str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    store, natural, same, other = runs
    assert main(["report", natural, same, other, "--store", str(store), "--json"]) == 0
    found = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)}
    pairs = {e["synthetic_run"]: e for e in found[natural]["natural_vs_synthetic_across_runs"]}
    assert set(pairs) == {same, other}
    assert pairs[same]["same_model"] is True and pairs[same]["note"] is None and pairs[same]["agree"] is True
    assert pairs[other]["same_model"] is False and pairs[other]["note"] == _note(natural, other)
    assert (pairs[other]["natural_model"], pairs[other]["synthetic_model"]) == (EARLY, LATE)
    assert pairs[other]["agree"] is False and pairs[other]["natural_run"] == natural
    # synthetic runs hold no natural profile: nothing across runs on their entries
    assert "natural_vs_synthetic_across_runs" not in found[same]
    assert "natural_vs_synthetic_across_runs" not in found[other]


def test_terminal_says_the_same(runs: tuple[Path, str, str, str], capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    store, natural, same, other = runs
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["report", "--details", natural, same, other, "--store", str(store), "--no-plots"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert _note(natural, other) in text and f"{natural} is a run of {EARLY}, {same} of" not in text
