"""Phone-book plots on three x axes (% of entries, prompt tokens, % of the model's window),
titles that say what is drawn, the report's plot flags, and the MUC in prompt tokens.

Every expectation is computed here from the store itself (SQLite read directly, the run's
tokenizer counting the prompt up to each needle's book line), never from the code under test.
"""

from __future__ import annotations

from ctxprobe.spec.names import as_ref

import json
import sqlite3
from pathlib import Path

import pytest

from ctxprobe.families.phonebook.analysis_axes import run_window
from ctxprobe.cli import main
from ctxprobe.families.phonebook.report_plots import msweep_figure, phonebook_report, position_figure

pytest.importorskip("matplotlib")

GRID = ["phonebook", "--tokenizer", "local", "--entries", "50,100", "--needles", "5,10", "--runs", "2",
        "--no-progress", "--no-plots"]
WINDOW = 8192


def _run(store: Path, model: str, *extra: str) -> str:
    """The run just stored (the last row: two runs made within one second tie on created_at)."""
    assert main([*GRID, "--model", model, "--store", str(store), *extra]) == 0
    with sqlite3.connect(store) as db:
        return str(db.execute("SELECT run_id FROM runs ORDER BY rowid DESC LIMIT 1").fetchone()[0])


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, object]:
    store = tmp_path_factory.mktemp("axes") / "s.sqlite"
    known = _run(store, f"sim:perfect?ctx={WINDOW}")
    unknown = _run(store, "sim:perfect")
    return {"store": store, "known": known, "unknown": unknown}


def _analysis(runs, key: str):
    return next(iter(phonebook_report([runs[key]], runs["store"], None, bootstrap=20).analyses.values()))


def _cases(store: Path, run_id: str) -> list[dict]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT c.length, c.token_count, c.meta_json, p.messages_json FROM cases c "
                          "JOIN prompts p USING (prompt_hash) WHERE c.run_id=?", (run_id,)).fetchall()
    return [{"length": L, "tokens": t, "meta": json.loads(m), "messages": json.loads(msgs)}
            for L, t, m, msgs in rows]


def _points(ax) -> dict[str, list[float]]:
    """Legend label → x of the per-bin points (the error bars' data line)."""
    return {c.get_label(): list(c.lines[0].get_xdata()) for c in ax.containers}


def _token_offset(tokenizer, messages: list[dict], name: str) -> int:
    """Tokens of the templated prompt before ``name``'s book line, counted by the tokenizer."""
    for i, m in enumerate(messages):
        text = m["content"]
        at = ("\n" + text).find(f"\n{name} : (")
        if at >= 0:
            return tokenizer.count_chat([*messages[:i], {**m, "content": text[:at]}])
    raise AssertionError(f"{name} has no book line")


def test_entries_axis_is_the_default(runs) -> None:
    an = _analysis(runs, "known")
    fig, axis = position_figure(an, length=100)
    ax = fig.axes[0]
    assert axis.kind == "entries" and ax.get_xlabel() == "position in the phone book (% of entries, 0 = first)"
    assert ax.get_xlim() == (0, 100)
    assert _points(ax)["N=10 (per bin, Wilson 95%)"] == pytest.approx([10 * b + 5 for b in range(10)])


def test_tokens_axis_places_each_bin_where_the_tokenizer_counts_it(runs) -> None:
    from ctxprobe.tokenizers import resolve_tokenizer

    tokenizer = resolve_tokenizer("local")
    an = _analysis(runs, "known")
    fig, axis = position_figure(an, length=100, x="tokens")
    ax = fig.axes[0]
    assert axis.kind == "tokens" and ax.get_xlabel() == "position in the prompt (tokens, 0 = start)"
    cases = [c for c in _cases(runs["store"], runs["known"]) if c["length"] == 100]
    for n in (5, 10):
        mine = [c for c in cases if c["meta"]["needles"] == n]
        want = [sum(_token_offset(tokenizer, c["messages"], c["meta"]["names"][b]) for c in mine) / len(mine)
                for b in range(n)]
        got = _points(ax)[f"N={n} (per bin, Wilson 95%)"]
        prompt = sum(c["tokens"] for c in mine) / len(mine)
        assert got == pytest.approx(want, abs=0.01 * prompt)  # within 1% of the prompt
        assert got == sorted(got) and 0 < got[0] and got[-1] < prompt
    longest = max(sum(c["tokens"] for c in cases if c["meta"]["needles"] == n) / 2 for n in (5, 10))
    assert ax.get_xlim()[1] == pytest.approx(longest)  # the axis ends at the longest prompt drawn


def test_window_axis_is_the_tokens_over_the_window(runs) -> None:
    an = _analysis(runs, "known")
    tokens = _points(msweep_figure(an, x="tokens")[0].axes[0])
    fig, axis = msweep_figure(an, x="window")
    ax = fig.axes[0]
    assert axis.kind == "window" and axis.omitted is None
    assert f"% of the model's {WINDOW:,}-token window, recorded with the run" in ax.get_xlabel()
    for label, xs in _points(ax).items():
        assert xs == pytest.approx([100 * t / WINDOW for t in tokens[label]])
    assert ax.get_xlim() == (0, 100)  # the whole window; the books fill a sixth of it


def test_unknown_window_omits_the_axis_and_says_why(runs) -> None:
    an = _analysis(runs, "unknown")
    assert an.window is None
    fig, axis = position_figure(an, x="window")
    assert axis.kind == "entries" and axis.omitted and "window is unknown" in axis.omitted
    assert "(window axis omitted: the model's window is unknown" in fig.axes[0].get_xlabel()


def test_window_sources(runs) -> None:
    from ctxprobe.core.runmeta import Preflight, RunMeta

    assert run_window("sim:perfect", None) is None
    assert run_window("sim:perfect", RunMeta(context_window=4096)).tokens == 4096
    served = run_window("sim:perfect", RunMeta(context_window=4096, preflight=Preflight(context_window=2048)))
    assert served is not None and served.tokens == 2048 and served.source.startswith("served")
    from ctxprobe.core.catalog import context_window

    hosted = run_window("openai:gpt-4o", None)
    assert hosted is not None and hosted.tokens == context_window(as_ref("openai:gpt-4o")) and hosted.source == "catalog"


def _png_text(path: Path) -> dict[str, str]:
    from PIL import Image

    with Image.open(path) as im:
        return dict(im.text)


def test_report_all_panels_and_flags_on_a_phonebook_run(runs, tmp_path, capsys) -> None:
    out = tmp_path / "png"
    assert main(["report", str(runs["unknown"]), "--store", str(runs["store"]), "--out", str(out), "--all-panels",
                 "--trend-degree", "1", "--x-axis", "window"]) == 0
    printed = capsys.readouterr().out
    assert "the window axis is omitted: the model's window is unknown" in " ".join(printed.split())
    names = sorted(p.name.split("-", 2)[2] for p in out.iterdir())
    assert names == ["msweep-N10.png", "msweep-N5.png", "position-M100.png", "position-M50.png"]
    for path in out.iterdir():
        text = _png_text(path)
        assert "trend (degree 1)" in text["Title"] and "trend (degree 1)" in text["Legend"]
        assert "(window axis omitted" in text["X axis"] and text["X range"] == "0 to 100"
    assert "N=5 · M=50, 100 entries" in _png_text(next(out.glob("*msweep-N5.png")))["Title"]
    assert "M=50 entries · N=5, 10" in _png_text(next(out.glob("*position-M50.png")))["Title"]


def test_report_tokens_axis_png_says_so(runs, tmp_path) -> None:
    out = tmp_path / "png"
    assert main(["report", str(runs["known"]), "--store", str(runs["store"]), "--out", str(out),
                 "--x-axis", "tokens"]) == 0
    text = _png_text(next(out.glob("*position.png")))
    assert text["X axis"] == "position in the prompt (tokens, 0 = start)"
    assert "trend (degree 2)" in text["Title"]  # the post's figures' degree by default
    longest = max(c["tokens"] for c in _cases(runs["store"], runs["known"]) if c["length"] == 100)
    lo, _, hi = text["X range"].split()
    assert float(lo) == 0 and 0.9 * longest < float(hi) <= longest


@pytest.mark.parametrize(("argv", "says"), [
    (["--x-axis", "pages"], "argument --x-axis: invalid choice: 'pages'"),
    (["--trend-degree", "-1"], "--trend-degree must be 0 (the metric fit) or more, got -1"),
    (["--trend-degree", "two"], "argument --trend-degree: invalid int value: 'two'"),
    (["--all-panels", "--json"], "--all-panels shape the PNGs of the terminal and HTML reports; --json draws none"),
])
def test_report_flag_errors_are_one_line(runs, argv, says, capsys) -> None:
    try:  # argparse's own errors exit with its usage and one error line
        code = main(["report", str(runs["known"]), "--store", str(runs["store"]), "--no-plots", *argv])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and says in errors[0]
    assert "Traceback" not in err


def test_report_flags_refused_for_other_runs(tmp_path, capsys) -> None:
    store = tmp_path / "s.sqlite"
    assert main(["run", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "512", "--depths", "0",
                 "--reps", "1", "--store", str(store), "--no-plots", "--no-progress"]) == 0
    with sqlite3.connect(store) as db:
        run_id = db.execute("SELECT run_id FROM runs").fetchone()[0]
    capsys.readouterr()
    assert main(["report", run_id, "--store", str(store), "--no-plots", "--x-axis", "tokens"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--x-axis: a report option of runs" in err


def test_muc_in_tokens_is_the_stored_prompt_count(runs, capsys) -> None:
    # sim:perfect recalls every entry: the MUC is the largest book, 100 entries, at N_ref = 10
    with sqlite3.connect(runs["store"]) as db:
        want = db.execute("SELECT AVG(token_count) FROM cases WHERE run_id=? AND length=100 "
                          "AND json_extract(meta_json, '$.needles')=10", (runs["known"],)).fetchone()[0]
    assert main(["report", str(runs["known"]), "--store", str(runs["store"]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    book = next(v for v in _find(data, "muc_tokens"))
    assert book["muc_tokens"] == pytest.approx(want)
    assert {"length": 100, "needles": 10, "tokens": pytest.approx(want)} in book["prompt_tokens"]
    assert main(["report", str(runs["known"]), "--store", str(runs["store"]), "--no-plots"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"(MUC: 100 entries ≈ {want:,.0f} prompt tokens at N=10)" in text
    assert f"≈ {want:,.0f} tok" in text  # the metric table's MUC cell


def test_muc_tokens_table_fits_80_columns(runs, capsys) -> None:
    from rich.console import Console
    import io

    buf = io.StringIO()
    phonebook_report([runs["known"]], runs["store"], None, Console(file=buf, width=80, color_system=None),
                     bootstrap=20)
    assert max(len(line) for line in buf.getvalue().splitlines()) <= 80


def _find(obj, key: str):
    """Every dict in ``obj`` (nested) that holds ``key``."""
    if isinstance(obj, dict):
        if key in obj:
            yield obj
        for v in obj.values():
            yield from _find(v, key)
    elif isinstance(obj, list):
        for v in obj:
            yield from _find(v, key)


def test_an_n100_panel_says_n100(tmp_path) -> None:
    """Once a title said N=10 for N=100: each panel's title names its own N."""
    store = tmp_path / "s.sqlite"
    assert main(["phonebook", "--model", "sim:perfect", "--tokenizer", "local", "--entries", "100,200",
                 "--needles", "10,100", "--runs", "1", "--no-progress", "--store", str(store),
                 "--out", str(tmp_path / "png"), "--all-panels", "--x-axis", "tokens"]) == 0
    texts = {p.name.split("-", 2)[2]: _png_text(p) for p in (tmp_path / "png").iterdir()}
    assert {t["X axis"] for t in texts.values()} == {"position in the prompt (tokens, 0 = start)"}
    titles = {name: t["Title"] for name, t in texts.items()}
    assert "· N=100 ·" in titles["msweep-N100.png"] and "N=10 " not in titles["msweep-N100.png"]
    assert "· N=10 ·" in titles["msweep-N10.png"]
    assert "· N=10, 100 ·" in titles["position-M200.png"]
    an = next(iter(phonebook_report([_only_run(store)], store, None, bootstrap=10).analyses.values()))
    assert "· N=100 ·" in msweep_figure(an)[0].axes[0].get_title()  # the default M-sweep: the largest N


def test_sharded_books_have_no_token_axis(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _run(store, "sim:perfect?ctx=8192", "--method", "ctxprobe", "--param", "phonebook.shards=2")
    an = _analysis({"store": store, "r": run_id}, "r")
    assert an.tokens is not None and "shards" in (an.tokens.reason or "")
    fig, axis = position_figure(an, x="tokens")
    assert axis.kind == "entries" and "(tokens axis omitted: the books are split into shards" in fig.axes[0].get_xlabel()


def _only_run(store: Path) -> str:
    with sqlite3.connect(store) as db:
        return str(db.execute("SELECT run_id FROM runs").fetchone()[0])


def test_without_a_tokenizer_the_token_places_are_an_estimate_and_say_so(runs) -> None:
    """The HTML/JSON hooks read no tokenizer: token places spread over characters, labelled."""
    from ctxprobe.families.phonebook.report import HOOKS
    from ctxprobe.store import iter_records

    an = HOOKS.html_data(iter_records(runs["known"], runs["store"]))
    assert an is not None and an.tokens is not None and not an.tokens.counted
    fig, axis = position_figure(an, length=100, x="tokens")
    assert axis.kind == "tokens" and "estimated from characters" in fig.axes[0].get_xlabel()
    counted = _points(position_figure(_analysis(runs, "known"), length=100, x="tokens")[0].axes[0])
    for label, xs in _points(fig.axes[0]).items():
        assert xs[0] > counted[label][0]  # the instructions before the book: fewer characters per token
        assert xs == pytest.approx(counted[label], abs=0.1 * an.tokens.prompt[(100, 10)])  # within 10% of it


def test_html_gives_the_muc_in_tokens(runs, tmp_path) -> None:
    import html
    import re

    from ctxprobe.report.html.page import build_html_report

    with sqlite3.connect(runs["store"]) as db:
        want = db.execute("SELECT AVG(token_count) FROM cases WHERE run_id=? AND length=100 "
                          "AND json_extract(meta_json, '$.needles')=10", (runs["known"],)).fetchone()[0]
    page = build_html_report([runs["known"]], runs["store"], tmp_path / "r.html").read_text()
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert f"(MUC: 100 entries ≈ {want:,.0f} prompt tokens at N=10)" in text
    assert re.search(rf"MUC robust 100 \[100, 100\] ≈ {want:,.0f} prompt tokens at N=10", text)
