"""The three 2025 families' own curves as PNGs, drawn by their report hooks: ``updates``'
PI-LLM curve (accuracy against U on a log axis, the fitted line, the slope in the title),
``longout``'s F1 against answer length (the bar, the output effective length) and
``instructions``' strict accuracy against instruction count (the capacity). The data each
PNG draws (``plot_data``) are held to the JSON report's numbers on sims with known
behaviour; ``run``/``report --out`` write the files, ``report --html`` inlines them with
alt text, and without matplotlib the report says in one line that it needs the extra."""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import pytest

from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.cli import main
from ctxprobe.report.hooks import family_hooks
from ctxprobe.report.load import report_json
from ctxprobe.report.terminal import PLOTS_SKIPPED
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep

PNG = b"\x89PNG\r\n\x1a\n"
FILES = ("updates-by-updates-per-key.png", "longout-by-answer-length.png", "instructions-by-instruction-count.png")


def _sweep(store: Path, model: str, family: str, params: dict, lengths: str = "2k", reps: int = 4, **more) -> str:
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": lengths, "depths": "0.5", "reps": reps,
                      "families": {family: params}, **more})
    return run_sweep(spec, store, progress=False).run_id


def _whiskers_hold_the_points(series) -> None:
    for y, lo, hi in zip(series.ys, series.lo, series.hi):
        assert y is None or lo <= y <= hi


def test_updates_plot_draws_the_json_curve_and_fit(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    us = [2, 4, 8, 16, 32]
    run_id = _sweep(store, "sim:interference?slope=0.15", "updates", {"keys": [4], "updates": us}, reps=6)
    shown = report_json([run_id], store)["updates"]["updates"]
    plot = family_hooks("updates").plot_data("M · run", "updates", shown)
    assert plot is not None and plot.log_base is not None  # U on a log axis
    (s,) = plot.series
    pts = shown["points"]
    assert s.xs == us == [p["updates"] for p in pts]
    assert s.ys == [p["accuracy"] for p in pts]
    assert [list(c) for c in zip(s.lo, s.hi)] == [p["accuracy_95ci"] for p in pts]
    for p in pts:  # the JSON's interval is Wilson's over the cases, summed scores as successes
        assert p["accuracy_95ci"] == pytest.approx(list(wilson_interval(p["accuracy"] * p["n"], p["n"])))
    _whiskers_hold_the_points(s)
    slope, a = shown["slope_per_ln_updates"], shown["intercept"]
    assert slope < 0 and plot.fit is not None  # the sim's accuracy falls with ln U
    assert (plot.fit.xs[0], plot.fit.xs[-1]) == pytest.approx((2, 32))
    assert all(y == pytest.approx(a + slope * math.log(x)) for x, y in zip(plot.fit.xs, plot.fit.ys))
    lo, hi = shown["slope_95ci"]
    assert f"slope {slope:+.3f} per ln U (95% CI {lo:+.3f} to {hi:+.3f})" in plot.title
    stale = sum(p["key_outcomes"].get("stale", 0) for p in pts)
    assert stale > 0 and f"stale: {stale} of {sum(sum(p['key_outcomes'].values()) for p in pts)} keys" \
        in plot.mark_label
    one = {**shown, "slope_per_ln_updates": None, "intercept": None, "slope_95ci": [None, None], "points": pts[:1]}
    drawn = family_hooks("updates").plot_data("M", "updates", one)
    assert drawn is not None and drawn.fit is None and "slope not fitted" in drawn.title  # one U: no line


def test_longout_plot_marks_the_bar_and_the_output_effective_length(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _sweep(store, "sim:out-budget?tokens=300", "longout", {"answer_tokens": [100, 200, 400, 800]}, "4k", 8)
    hooks = family_hooks("longout")
    lowest = min(p["f1"] for p in report_json([run_id], store)["longout"]["longout"]["points"])
    for bar, eff in ((None, 200), (lowest, 800)):  # the report's bar moves the mark
        shown = report_json([run_id], store, threshold=bar)["longout"]["longout"]
        assert shown["output_effective_length"] == eff
        plot = hooks.plot_data("M", "longout", shown)
        assert plot is not None and plot.mark_x == eff and plot.bar == shown["threshold"]
        assert f"output effective length {eff} tokens" in plot.mark_label
    (s,) = plot.series
    pts = shown["points"]
    assert s.xs == [100, 200, 400, 800] and s.ys == [p["f1"] for p in pts] and s.ys[:2] == [1.0, 1.0]
    assert [[lo, hi] for lo, hi in zip(s.lo, s.hi)] == [p["f1_95ci"] for p in pts]
    _whiskers_hold_the_points(s)
    assert all(p["f1_95ci"] == pytest.approx(list(wilson_interval(p["f1"] * p["n"], p["n"]))) for p in pts)


def test_longout_level_cut_at_the_limit_is_a_gap_with_no_whisker(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _sweep(store, "sim:perfect", "longout", {"answer_tokens": [100, 400]}, "4k", 2,
                    decoding={"max_tokens": 250})
    shown = report_json([run_id], store)["longout"]["longout"]
    assert shown["points"][1]["n"] == 0 and shown["points"][1]["f1_95ci"] is None
    plot = family_hooks("longout").plot_data("M", "longout", shown)
    assert plot is not None
    (s,) = plot.series
    assert s.ys == [1.0, None] and s.lo[1] is None and s.hi[1] is None and "cut" in s.gap_note
    assert plot.mark_x == 100


def test_instructions_plot_marks_the_capacity(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    counts = [1, 2, 3, 5, 8]
    run_id = _sweep(store, "sim:capacity?n=3", "instructions", {"count": counts}, lengths="1k", reps=10)
    shown = report_json([run_id], store)["instructions"]["instructions"]
    plot = family_hooks("instructions").plot_data("M", "instructions", shown)
    assert plot is not None and plot.mark_x == 3 == shown["instruction_capacity"]
    assert plot.bar == shown["threshold"] and "instruction capacity 3" in plot.title
    inst, prompt = plot.series
    pts = shown["points"]
    assert inst.xs == prompt.xs == counts
    assert inst.ys == [p["inst_level_strict_acc"] for p in pts] == pytest.approx([min(1.0, 3 / c) for c in counts])
    assert [[lo, hi] for lo, hi in zip(inst.lo, inst.hi)] == [p["inst_level_strict_95ci"] for p in pts]
    assert prompt.ys == [p["prompt_level_strict_acc"] for p in pts] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert [[lo, hi] for lo, hi in zip(prompt.lo, prompt.hi)] == [p["prompt_level_strict_95ci"] for p in pts]
    _whiskers_hold_the_points(inst)
    _whiskers_hold_the_points(prompt)
    # instructions of one prompt fail together here (the sim follows the first 3): the interval is
    # wider than 16 independent instructions' (2 prompts of 8) would give
    assert all(p["n"] == 2 for p in pts)
    lo, hi = pts[-1]["inst_level_strict_95ci"]
    assert hi - lo > wilson_interval(6, 16)[1] - wilson_interval(6, 16)[0]


def _cli_run(tmp_path: Path, *extra: str) -> tuple[int, Path]:
    store = tmp_path / "s.sqlite"
    code = main(["run", "--model", "sim:perfect", "--lengths", "2k", "--depths", "0.5", "--reps", "2",
                 "--store", str(store), "--no-progress", "--family", "updates,longout,instructions",
                 "--param", "longout.answer_tokens=150", "--param", "updates.updates=3,10", *extra])
    return code, store


def test_run_writes_each_family_s_png_and_the_html_inlines_them(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, store = _cli_run(tmp_path, "--out", str(tmp_path / "out"))
    assert code == 0
    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
    folder = tmp_path / "out" / run_id
    said = capsys.readouterr().out
    for name in FILES:
        assert (folder / name).read_bytes().startswith(PNG)
    # the default report names the folder once (a long path may wrap in the console); --details each file
    assert f"PNG plots to {folder}" in said.replace("\n", "")
    page = tmp_path / "r.html"
    assert main(["report", run_id, "--html", str(page), "--out", str(tmp_path / "html"), "--store", str(store)]) == 0
    html = page.read_text(encoding="utf-8")
    for alt in (f"sim:perfect · {run_id} · updates: accuracy against updates per key (log axis), accuracy = 1.000",
                f"sim:perfect · {run_id} · longout: F1 against answer length (log axis), output effective length 150",
                f"sim:perfect · {run_id} · instructions: IFEval strict accuracy against instruction count, "
                "instruction capacity 3"):
        assert re.search(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="' + re.escape(alt), html), alt
    for name in FILES:  # the page's PNGs kept under --out too, in the run's folder
        assert (tmp_path / "html" / run_id / name).read_bytes().startswith(PNG)


def test_without_matplotlib_the_report_says_it_needs_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    monkeypatch.chdir(tmp_path)
    code, store = _cli_run(tmp_path)
    out = capsys.readouterr().out
    assert code == 0 and not (tmp_path / "ctxprobe-report").exists()
    assert " ".join(out.split()).count("ctxprobe[plot]") == 1 and PLOTS_SKIPPED in " ".join(out.split())
    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
    assert main(["report", run_id, "--out", str(tmp_path / "out"), "--store", str(store)]) == 2  # PNGs asked for
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line] == [
        "error: PNG plots needs the 'matplotlib' package: pip install 'ctxprobe[plot]'"]
    from ctxprobe.errors import MissingExtraError

    extra = report_json([run_id], store)
    for family in ("updates", "longout", "instructions"):  # each family's own PNGs ask for it too
        with pytest.raises(MissingExtraError, match=r"pip install 'ctxprobe\[plot\]'$"):
            family_hooks(family).write_pngs(extra[family], tmp_path / "x", "M")
    page = tmp_path / "r.html"
    assert main(["report", run_id, "--html", str(page), "--store", str(store)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "data:image/png" not in html
    # one note a figure: all families, each family's heatmap and curve, and each family's own curve
    assert html.count("plot not drawn: matplotlib is not installed (pip install 'ctxprobe[plot]')") == 1 + 3 * 2 + 3


def test_hooks_without_a_plot_draw_nothing(tmp_path: Path) -> None:
    from ctxprobe.report.hooks import NO_HOOKS
    from ctxprobe.report.html.label_tables import LabelTableHooks
    from ctxprobe.report.html.parts import Table

    class Plain(LabelTableHooks):
        title, anchor = "Plain", "plain"

        def table(self, run: str, label: str, data: object) -> Table:
            return Table(["x"], [["1"]])

    assert NO_HOOKS.write_pngs({"x": {}}, tmp_path, "M") == []
    assert Plain().write_pngs({"plain": {"points": []}}, tmp_path, "M") == [] and not list(tmp_path.iterdir())
    section = Plain().html_section({"M · run": {"plain": {}}}, tmp_path)
    assert section is not None and "<figure>" not in section.html and "<table" in section.html
