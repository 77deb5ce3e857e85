"""A decoding variant's k samples in the report: every reader shows the interval clustered
by case and says cases × samples; the variant sent once reads as it always did.

A real sweep: ``sim:perfect?tnoise=0.5`` behind the loopback sim server, read over HTTP by
the ``openai-compat`` provider, stored in SQLite, reported by the CLI (terminal, JSON,
HTML). At temperature 0.7 each sample misses with probability 0.35, drawn per prompt and
request seed, so the 5 samples of a case differ and the stored ids end ``/s0`` … ``/s4``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.analysis.grid import cell_stats
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.cli import main
from ctxprobe.models import resolve_provider
from ctxprobe.sim.server import SimServer
from ctxprobe.spec import make_spec
from ctxprobe.spec.variants import expand_variants, parse_variants
from ctxprobe.store import open_existing
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

REPS = 6


@pytest.fixture(scope="module")
def sampled_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("sampled")
    tok = resolve_tokenizer("local")
    families = expand_variants({"niah": {}}, parse_variants("t0:temperature=0, t07:temperature=0.7+samples=5"))
    with SimServer(resolve_provider("sim:perfect?tnoise=0.5", tok), tok) as server:
        spec = make_spec({"model": f"openai-compat:sim@{server.start()}", "tokenizer": "local", "lengths": "1k,2k",
                          "depths": "0,1", "reps": REPS, "families": families})
        run_id = run_sweep(spec, tmp / "s.sqlite", progress=False).run_id
    return tmp / "s.sqlite", run_id


def test_the_store_hands_over_each_samples_index(sampled_run: tuple[Path, str]) -> None:
    store, run_id = sampled_run
    with open_existing(store) as st:
        rows = st.result_rows(run_id)
    hot = [r for r in rows if r.family == "niah~t07"]
    assert len(hot) == 2 * 2 * REPS * 5 and sorted({r.sample for r in hot}) == [0, 1, 2, 3, 4]
    assert all(r.sample is None for r in rows if r.family == "niah~t0")
    cells = {(c.family, c.length, c.depth): c for c in cell_stats(rows)}
    hot_cell, cold_cell = cells[("niah~t07", 1024, 0.0)], cells[("niah~t0", 1024, 0.0)]
    assert (hot_cell.n, hot_cell.cases) == (REPS * 5, REPS) and cold_cell.cases is None
    assert (cold_cell.lo, cold_cell.hi) == wilson_interval(REPS, REPS)  # sent once: Wilson, as before
    hot_wilson = wilson_interval(hot_cell.n * (hot_cell.mean or 0.0), hot_cell.n)
    assert hot_cell.hi - hot_cell.lo > hot_wilson[1] - hot_wilson[0]


def test_json_names_the_clustered_interval_and_cases_by_samples(sampled_run: tuple[Path, str],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id = sampled_run
    assert main(["report", run_id, "--store", str(store), "--json", "--no-plots"]) == 0
    data = json.loads(capsys.readouterr().out)
    profiles = {p["family"]: p for p in data["profiles"]}
    hot, cold = profiles["niah~t07"], profiles["niah~t0"]
    assert "clustered by case" in hot["interval"] and "interval" not in cold
    assert {c["n_label"] for c in hot["cells"]} == {f"{REPS}×5"} and all(c["cases"] == REPS for c in hot["cells"])
    assert all("cases" not in c and "n_label" not in c for c in cold["cells"] + cold["lengths"])
    intervals = data["effective_length_intervals"]
    assert "clustered by case" in intervals["niah~t07"]["method"]
    assert "clustered" not in intervals["niah~t0"]["method"]


def test_terminal_and_html_say_cases_by_samples(sampled_run: tuple[Path, str], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id = sampled_run
    html = tmp_path / "r.html"
    assert main(["report", run_id, "--store", str(store), "--no-plots", "--details"]) == 0
    out = capsys.readouterr().out
    assert "niah~t07: accuracy by length × depth" in out
    assert "95% CI clustered by case" in out and f"n = {REPS}×5 cases × samples per cell" in out
    assert f"n = {REPS} scored cases per cell" in out  # the variant sent once, as before
    assert "mean [Wilson 95% CI]" in out
    assert main(["report", run_id, "--store", str(store), "--no-plots", "--html", str(html)]) == 0
    page = html.read_text()
    assert f">{REPS}×5<" in page and "95% CI clustered by case" in page
