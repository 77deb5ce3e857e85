"""``report --html`` draws a phone-book run's plots as the terminal report's flags say:
``--x-axis entries|tokens|window``, ``--trend-degree``, ``--all-panels``, each PNG reading the
same as the terminal report's PNG of the same run and flags (PNG text chunks: title, x axis,
x range), the page's captions naming the axis (and why one is omitted); refused in one line
for a page with no phone-book run, and still refused with ``--json``."""

from __future__ import annotations

import html
import re
import sqlite3
from pathlib import Path

import pytest

from ctxprobe.cli import main

pytest.importorskip("matplotlib")

GRID = ["phonebook", "--tokenizer", "local", "--entries", "50,100", "--needles", "5,10", "--runs", "2",
        "--no-progress", "--no-plots"]
WINDOW = 8192


def _run(store: Path, model: str) -> str:
    """The run just stored (the last row: two runs made within one second tie on created_at)."""
    assert main([*GRID, "--model", model, "--store", str(store)]) == 0
    with sqlite3.connect(store) as db:
        return str(db.execute("SELECT run_id FROM runs ORDER BY rowid DESC LIMIT 1").fetchone()[0])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    store = tmp_path_factory.mktemp("html-axes") / "s.sqlite"
    return {"store": store, "known": _run(store, f"sim:perfect?ctx={WINDOW}"), "unknown": _run(store, "sim:perfect")}


def _png_text(path: Path) -> dict[str, str]:
    from PIL import Image

    with Image.open(path) as im:
        return dict(im.text)


def _page(runs, key: str, out: Path, *flags: str) -> tuple[str, Path]:
    """The page's text and the folder its PNGs of the run went to."""
    page = out / "r.html"
    assert main(["report", str(runs[key]), "--store", str(runs["store"]), "--html", str(page), "--out",
                 str(out / "png"), *flags]) == 0
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())).split())
    return text, out / "png" / str(runs[key])


def _terminal_png(runs, key: str, out: Path, name: str, *flags: str) -> dict[str, str]:
    assert main(["report", str(runs[key]), "--store", str(runs["store"]), "--out", str(out), *flags]) == 0
    return _png_text(next(out.glob(f"phonebook-*-{name}.png")))


def test_default_stays_on_entries(runs, tmp_path: Path) -> None:
    text, png = _page(runs, "known", tmp_path)
    drawn = _png_text(png / "phonebook-position.png")
    assert drawn["X axis"] == "position in the phone book (% of entries, 0 = first)"
    assert "trend (degree 2)" in drawn["Title"] and "trend (degree 2) through the bin means" in text
    assert "one line per N; x: position in the phone book (% of entries, 0 = first)" in text


@pytest.mark.parametrize("axis", ["tokens", "window"])
def test_html_png_reads_as_the_terminal_png(runs, tmp_path: Path, axis: str, capsys) -> None:
    text, png = _page(runs, "known", tmp_path / "h", "--x-axis", axis, "--trend-degree", "1")
    capsys.readouterr()
    for name in ("position", "msweep"):
        drawn = _png_text(png / f"phonebook-{name}.png")
        terminal = _terminal_png(runs, "known", tmp_path / f"t-{name}", name, "--x-axis", axis, "--trend-degree", "1")
        assert drawn["X axis"] == terminal["X axis"] and drawn["X range"] == terminal["X range"]
        assert drawn["Legend"] == terminal["Legend"] and "trend (degree 1)" in drawn["Title"]
    x_label = _png_text(png / "phonebook-position.png")["X axis"]
    if axis == "tokens":  # the run's tokenizer ("local") counts here: token places are counted, not estimated
        assert x_label == "position in the prompt (tokens, 0 = start)"
    else:
        assert x_label.startswith(f"position in the prompt (% of the model's {WINDOW:,}-token window, recorded")
    assert f"x: {x_label}" in text and "trend (degree 1) through the bin means" in text


def test_unknown_window_is_omitted_and_the_caption_says_why(runs, tmp_path: Path) -> None:
    text, png = _page(runs, "unknown", tmp_path, "--x-axis", "window")
    assert "(window axis omitted: the model's window is unknown" in _png_text(png / "phonebook-position.png")["X axis"]
    assert "x: position in the phone book (% of entries, 0 = first) (window axis omitted: the model's window is " \
           "unknown" in text


def test_all_panels_on_the_page(runs, tmp_path: Path) -> None:
    text, png = _page(runs, "known", tmp_path, "--all-panels")
    assert sorted(p.name for p in png.glob("phonebook-*.png")) == [
        "phonebook-msweep-N10.png", "phonebook-msweep-N5.png", "phonebook-position-M100.png",
        "phonebook-position-M50.png"]
    assert "M=50 entries · N=5, 10" in _png_text(png / "phonebook-position-M50.png")["Title"]
    assert "recall by position, book 50, one line per N" in text
    assert "recall by position, largest book 100, one line per N" in text


def _one_error(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_refused_without_a_phonebook_run_and_with_json(runs, tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.sqlite"
    assert main(["run", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "512", "--depths", "0",
                 "--reps", "1", "--store", str(store), "--no-plots", "--no-progress"]) == 0
    with sqlite3.connect(store) as db:
        run_id = db.execute("SELECT run_id FROM runs").fetchone()[0]
    capsys.readouterr()
    err = _one_error(["report", run_id, "--store", str(store), "--html", str(tmp_path / "r.html"),
                      "--x-axis", "tokens"], capsys)
    assert "--x-axis: a report option of runs of a family whose report takes it" in err
    assert not (tmp_path / "r.html").exists()
    err = _one_error(["report", str(runs["known"]), "--store", str(runs["store"]), "--json", "--x-axis", "tokens"],
                     capsys)
    assert "--x-axis shape the PNGs of the terminal and HTML reports; --json draws none" in err
