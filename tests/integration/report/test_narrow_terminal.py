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


def _record(run_id: str, model: str, family: str, lengths: list[int]):
    from ctxprobe.core.runmeta import RunMeta
    from ctxprobe.store.db import RunRecord

    return RunRecord(run_id=run_id, created_at="2026-12-04T10:40:18+00:00", updated_at="", model=model,
                     tokenizer="local", family=family, ctxprobe_version="0", spec={"lengths": lengths},
                     meta=RunMeta.from_json({}), status="complete")


@pytest.mark.parametrize("width", [80, 100])
def test_runs_keeps_model_names_and_family_labels_whole(width: int) -> None:
    """Four families and six lengths beside a 16-character sim name: the lengths fold at
    their commas; the model name and each family label stay on one line (they were cut
    as 'sim:blind-mid' / 'dle' to give the lengths room)."""
    from rich.console import Console

    from ctxprobe.report.runs import runs_table

    runs = [_record("0abcdef0123", "sim:blind-middle", "niah,vartrack,aggregation,multihop",
                    [512, 1024, 2048, 4096, 8192, 131072]),
            _record("1abcdef0123", "anthropic:claude-sonnet-4-5", "niah~start,niah~end", [1024]),
            _record("2abcdef0123", "sim:perfect", "niah", [1024])]
    console = Console(width=width, record=True)
    console.print(runs_table(runs, width))
    text = console.export_text()
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    words = text.split()
    for whole in ("sim:blind-middle", "aggregation,", "multihop", "niah~start,", "complete", "128K"):
        assert whole in words, whole
    assert ("anthropic:claude-sonnet-4-5" in words) == (width >= 100)  # at 80 the longest name folds
    assert words.count("complete") == 3


def test_a_long_title_or_caption_widens_the_table_not_wraps_at_its_edge() -> None:
    """A narrow table under a 70-character title: the title stays one line at 80 columns
    (it wrapped at the table's own edge, '[Wilson 95%' / 'CI])'); past 80 it still wraps."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ctxprobe.report.table import fitting

    def table(title: str, caption: str) -> Table:
        t = Table("length", "acc", title=title, caption=Text(caption), title_justify="left", caption_justify="left")
        t.add_row("1K", "1.00")
        return t

    title = "niah: accuracy by length × depth  (mean; pooled: mean [Wilson 95% CI])"
    caption = "per-depth intervals omitted to fit the terminal; widen it or use --json"
    for width, one_line in ((80, True), (50, False)):
        console = Console(width=width, record=True)
        console.print(fitting(console, [table(title, caption)]))
        lines = [line.rstrip() for line in console.export_text().splitlines()]
        assert (title in lines) == one_line and (caption in lines) == one_line
        assert max(map(len, lines)) <= width
    console = Console(width=80, record=True)
    console.print(fitting(console, [table("short", "short too")]))
    assert max(len(line.rstrip()) for line in console.export_text().splitlines()) < 30  # no needless widening
