"""Every table readable at 80 columns (a CI log): nothing cut, run ids told apart."""

from __future__ import annotations

import pytest

from ctxprobe.cli import main
from ctxprobe.report.runs import unique_prefixes
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep


def test_unique_prefixes_grow_only_where_ids_collide() -> None:
    ids = ["09d9ea1abc12", "09d9ea1abd34", "7f00aa112233", "09d9ea0fffff"]
    got = unique_prefixes(ids)
    assert got["7f00aa112233"] == "7f00aa1"  # the minimum, 7
    assert got["09d9ea0fffff"] == "09d9ea0"  # differs at the 7th character: 7 suffice
    assert got["09d9ea1abc12"] == "09d9ea1abc" and got["09d9ea1abd34"] == "09d9ea1abd"  # one past the shared 9
    for run_id, prefix in got.items():
        assert [i for i in ids if i.startswith(prefix)] == [run_id]
    assert unique_prefixes(["abc"]) == {"abc": "abc"}


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_report_and_runs_fit_80_columns_uncut(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    store = tmp_path / "s.sqlite"
    ids = []
    for model in ("sim:blind-middle", "sim:first-half"):
        spec = make_spec({"model": model, "lengths": "512,1k", "depths": "0,0.25,0.5,0.75,1", "reps": 1,
                          "families": "niah,vartrack"})
        ids.append(run_sweep(spec, store, progress=False).run_id)
    report = _out(capsys, "report", ids[0][:8], "--store", str(store), "--no-plots")
    runs = _out(capsys, "runs", "--store", str(store))
    compared = _out(capsys, "compare", ids[0][:8], ids[1][:8], "--store", str(store))
    for text in (report, runs, compared):
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= 80
        assert "…" not in text  # rich's truncation mark: no cell or header cut short
    assert "100%" in report and "1.00" in report
    assert "vartrack:" in compared and "p Holm" in compared
    with Store(store) as s:
        prefixes = unique_prefixes([r.run_id for r in s.list_runs()])
    for run_id in ids:
        assert prefixes[run_id] in runs and run_id.startswith(prefixes[run_id])
    assert "sim:blind-middle" in runs and "sim:first-half" in runs
