"""Small things a first reader met, each fixed where it was said: a running run's page
reloads itself, one run draws no chart over time, compare gives no token difference from
"below the shortest length", the registry says "family", a bad --reps is one line of ours,
the progress bar keeps its numbers whole when narrow, check's lines fit 80 columns, and the
runs table folds a batch run's long status instead of cutting it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from ctxprobe.cli import main
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep

GRID = {"lengths": "1k,2k", "depths": "0,0.5,1", "reps": 8, "families": "niah"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    store = tmp_path_factory.mktemp("left") / "s.sqlite"
    perfect = run_sweep(make_spec({"model": "sim:perfect", **GRID}), store, progress=False).run_id
    blind = run_sweep(make_spec({"model": "sim:blind-middle", **GRID}), store, progress=False).run_id
    alone = run_sweep(make_spec({"model": "sim:perfect", **GRID, "seed": 7}), store, progress=False).run_id
    return {"store": store, "perfect": perfect, "blind": blind, "alone": alone}


def test_a_running_runs_page_reloads_itself_and_a_finished_one_does_not(runs: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from ctxprobe.view import make_app, write_bundle

    from ctxprobe.store.claims import Coordinator

    store = tmp_path / "s.sqlite"
    store.write_bytes(Path(runs["store"]).read_bytes())
    session = Coordinator(store, runs["blind"]).start(heartbeat=False)  # a sweep holding the run, as one does
    try:
        with Store(store) as s:
            s.update_run(runs["blind"], status="running")
        client = TestClient(make_app(store))
        running = client.get(f"/run/{runs['blind']}").text
        assert '<meta http-equiv="refresh" content="3">' in running and "the page reloads every 3 s" in running
        assert 'http-equiv="refresh"' not in client.get(f"/run/{runs['perfect']}").text  # complete: stays put
        out = write_bundle(store, tmp_path / "bundle")  # a static bundle never reloads
        pages = [p.read_text() for p in Path(out).parent.rglob("*.html")]
        assert pages and not any('http-equiv="refresh"' in p for p in pages)
    finally:
        session.end()


def test_a_slice_of_one_run_draws_no_chart_over_time(runs: dict[str, Any]) -> None:
    from starlette.testclient import TestClient

    from ctxprobe.view import make_app

    page = TestClient(make_app(runs["store"])).get("/history").text
    sections = page.split('<section class="slice"')[1:]
    alone = next(s for s in sections if runs["alone"] in s)
    pair = next(s for s in sections if runs["perfect"] in s)
    assert '<svg class="trend"' not in alone and "one run of this slice so far" in alone
    assert '<svg class="trend"' in pair  # two runs of one slice: the chart is drawn


def test_compare_gives_no_token_difference_from_below_the_shortest_length(runs: dict[str, Any]) -> None:
    from ctxprobe.report.compare_runs import compare_runs

    verdict = compare_runs(runs["blind"], runs["perfect"], runs["store"]).verdict()
    assert "effective length below 1K -> 2K" in verdict
    assert "+2K to +2K" not in verdict and "(difference 95%" not in verdict  # "below 1K" was counted as 0 tokens
    assert "no difference in tokens: below the shortest length has no number" in verdict
    both = compare_runs(runs["perfect"], runs["perfect"], runs["store"]).verdict()
    assert "(difference 95%: +0 to +0)" in both  # two numbers: their difference still stated


def test_the_registry_names_a_family_in_the_singular() -> None:
    from ctxprobe.core import registry
    from ctxprobe.errors import CtxprobeError

    with pytest.raises(CtxprobeError, match=r"^unknown family 'nosuch'; available: ") as err:
        registry.get("families", "nosuch")
    assert "familie" not in str(err.value)
    with pytest.raises(CtxprobeError, match=r"^unknown report section 'x'"):
        registry.get("report_sections", "x")


@pytest.mark.parametrize(("flag", "value", "said"), [("--reps", "0", "--reps 0: must be at least 1"),
                                                     ("--reps", "100001", "--reps 100001: must be at most 100000"),
                                                     ("--max-tokens", "0", "--max-tokens 0: must be at least 1")])
def test_a_value_out_of_range_is_one_line_of_ours(flag: str, value: str, said: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--model", "sim:perfect", "--lengths", "1k", flag, value, "--store", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert said in err and "Input should be" not in err and "greater than or equal" not in err


@pytest.mark.parametrize("width", [40, 50, 59, 60, 70, 79, 80, 100, 120])
def test_the_progress_bar_keeps_counts_and_times_whole_at_any_width(width: int) -> None:
    from ctxprobe.core.case import Cell
    from ctxprobe.sweep.display import Display

    class _Case:
        cell = Cell("aggregation", 131072, 0.25)

    display = Display(1200, 0, True, Console(file=io.StringIO(), width=width))
    display.update(_Case(), 1.0, "correct", spent=0.0123)  # type: ignore[arg-type]  # only .cell is read
    display.progress.update(display.task, advance=400)
    out = io.StringIO()
    Console(file=out, width=width).print(display.progress.make_tasks_table(display.progress.tasks))
    line = out.getvalue().rstrip("\n")
    assert "\n" not in line and len(line) <= width
    numbers = line[line.index("401/1200"):]  # was "401…", "0:0…" below ~70 columns
    assert "…" not in numbers and "acc 1.00 $0.0123" in numbers and "ETA 0:00:" in numbers


def test_check_lines_fit_80_columns(runs: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code = main(["check", runs["blind"], "--baseline", runs["perfect"], "--store", str(runs["store"])])
    out = capsys.readouterr().out
    assert code != 0 and "FAIL" in out
    assert max(len(line) for line in out.splitlines()) <= 80, out


def test_the_runs_table_folds_a_batch_runs_long_status() -> None:
    from ctxprobe.core.runmeta import RunMeta
    from ctxprobe.report.runs import runs_table
    from ctxprobe.store.db import RunRecord

    def record(i: int, model: str, status: str, batch: str | None) -> RunRecord:
        return RunRecord(run_id=f"{i}abcdef0123", created_at="2026-12-04T10:40:18+00:00", updated_at="", model=model,
                         tokenizer="local", family="niah,vartrack", ctxprobe_version="0",
                         spec={"lengths": [1024, 2048]}, meta=RunMeta.from_json({}), status=status, n_planned=1200,
                         n_final=0, batch=batch)

    rows = [record(0, "anthropic/claude-sonnet-4-5", "waiting", "3 batches: finalizing,in_progress,validating"),
            record(1, "sim:perfect", "complete", None)]
    console = Console(width=80, record=True)
    console.print(runs_table(rows, 80))
    text = console.export_text()
    assert "…" not in text and max(len(line.rstrip()) for line in text.splitlines()) <= 80
    words = text.split()
    for whole in ("waiting", "0/1200", "finalizing,", "in_progress,", "validating", "sim:perfect", "niah,"):
        assert whole in words, whole
