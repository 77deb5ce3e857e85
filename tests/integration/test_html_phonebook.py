"""The HTML report shows a phone-book run as the experiment it is: a verdict in book sizes,
position and M-sweep plots, runs side by side, and the metric table (issues 5 and 7)."""

from __future__ import annotations

import html
import re

from ctxprobe.report.html.page import build_html_report
from ctxprobe.sweep.run import run_sweep
from ctxprobe.families.phonebook.task_grid import phonebook_spec


def _run(store, model: str) -> str:
    spec = phonebook_spec(model=model, entries=["120", "240"], needles=[5, 10], runs=3, tokenizer="local")
    return run_sweep(spec, store, progress=False).run_id


def _text(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split()).replace(" )", ")").replace("( ", "(")


def test_phonebook_section(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    perfect, blind = _run(store, "sim:perfect"), _run(store, "sim:blind-middle")
    one = (tmp_path / "one.html")
    build_html_report([blind], store, one, png_dir=tmp_path / "png")
    page = one.read_text()
    text = _text(page)
    assert '<section id="phonebook">' in page and 'href="#phonebook"' in page
    # blind-middle loses the middle of every book: the verdict says no size holds everywhere
    assert re.search(r"phonebook ?\(associative recall of many entries\): at the largest book \(240 entries, N=10\) "
                     r"\d+% of needles were recalled", text)
    assert "no tested book size keeps every position above 0.8" in text
    assert {p.name for p in (tmp_path / "png" / blind).iterdir()} >= {"phonebook-position.png",
                                                                      "phonebook-msweep.png"}
    assert re.search(r"LCRDS robust 240 [\d.]+ \[", text)
    both = tmp_path / "both.html"
    build_html_report([perfect, blind], store, both)
    text = _text(both.read_text())
    assert "every tested book keeps every position above 0.8" in text  # the perfect reader
    assert "runs compared at the first run's largest book and N" in text
    # the runs' position and M-sweep plots + the comparison; no token-axis heatmap, curve or
    # all-families chart of a book sized in entries (once a one-column "0%" heatmap)
    assert both.read_text().count("data:image/png;base64,") == 2 * 2 + 1
    assert "Book sizes are in entries, not tokens" in text
    assert "lengths 120 entries, 240 entries" in text
    assert "CSI: drop in recall from the smallest book to this one" in text  # acronyms are defined
    assert "recall: see Phone book" in text  # one interval per quantity: recall is shown once


def test_no_phonebook_no_section(tmp_path) -> None:
    from ctxprobe.spec import make_spec

    store = tmp_path / "s.sqlite"
    run = run_sweep(make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "512", "depths": "0,1",
                               "reps": 1}), store, progress=False)
    page = build_html_report([run.run_id], store, tmp_path / "r.html").read_text()
    assert 'id="phonebook"' not in page
