"""The trained window is the default limit of in-process GGUF models: read from the GGUF,
enforced before anything is sent, passable only with --allow-beyond-window (then a
warning comes first), and marked on the plots."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.embedded import embedded_model_path
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.spec import make_spec
from ctxprobe.cases.families import build_families
from ctxprobe.sweep.run import beyond_trained_warning, check_lengths, run_sweep
from ctxprobe.haystack.context import BuildContext
from ctxprobe.tokenizers import resolve_tokenizer


def _gguf_context_length(path: Path) -> int:
    """Read ``<arch>.context_length`` with the gguf package (independent of llama.cpp)."""
    gguf = pytest.importorskip("gguf")
    reader = gguf.GGUFReader(str(path))
    arch_field = reader.fields["general.architecture"]
    arch = bytes(arch_field.parts[arch_field.data[0]]).decode()
    length_field = reader.fields[f"{arch}.context_length"]
    return int(length_field.parts[length_field.data[0]][0])


@pytest.fixture(scope="module")
def tok():
    return resolve_tokenizer("local")


def test_local_window_is_the_trained_context_from_the_gguf(tok) -> None:
    trained = _gguf_context_length(embedded_model_path())
    assert trained == 8192  # SmolLM2-135M-Instruct
    provider = resolve_provider("local", tok)
    assert provider.context_window == trained and provider.trained_context == trained
    # --allow-beyond-window gives the runtime a larger context; the trained window stays known
    wide = resolve_provider("local", tok, n_ctx=16384)
    assert wide.context_window == 16384 and wide.trained_context == trained


def _spec(lengths: str, **kw) -> object:
    return make_spec({"model": "local", "lengths": lengths, "depths": "0.5", "reps": 1,
                      "decoding": {"max_tokens": 40}, **kw})


def _families(spec, tok):
    return build_families(spec, BuildContext(tok, None))


def test_length_plus_output_at_the_trained_window_passes_one_past_is_refused(tok) -> None:
    provider = resolve_provider("local", tok)
    ok = _spec(str(8192 - 40))
    check_lengths(ok, provider, _families(ok, tok))  # prompt + output == 8192: inside
    past = _spec(str(8192 - 39))
    with pytest.raises(CtxprobeError, match="exceeds local's trained window of 8,192 tokens.*--allow-beyond-window"):
        check_lengths(past, provider, _families(past, tok))


def test_warning_boundary(tok) -> None:
    provider = resolve_provider("local", tok)
    at = _spec(str(8192 - 40), allow_beyond_window=True)
    assert beyond_trained_warning(at, provider, tok, {("niah", 8152): 8152}) is None
    past = _spec("8153,9000", allow_beyond_window=True)
    warning = beyond_trained_warning(past, provider, tok, {("niah", 8153): 8153, ("niah", 9000): 9000})
    assert warning is not None and "8,153, 9,000" in warning and "trained context of 8,192" in warning


def test_beyond_window_warning_is_said_before_the_first_request(tok) -> None:
    """With the flag, the sweep warns before its executor sends anything (sim model, local tokenizer)."""
    from io import StringIO

    from rich.console import Console

    from ctxprobe.runner import execute

    buf = StringIO()
    console = Console(file=buf, width=200)
    seen: list[str] = []

    async def spy(*args, **kwargs):
        seen.append(buf.getvalue())
        return await execute(*args, **kwargs)

    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1k,9k", "depths": "0.5", "reps": 1,
                      "allow_beyond_window": True})
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        run_sweep(spec, Path(d) / "s.sqlite", progress=False, console=console, executor=spy)
    assert seen and "pass sim:perfect's trained context of 8,192 tokens" in seen[0].replace("\n", " ")
    assert "9,216" in seen[0].replace("\n", " ")


def test_cli_refuses_past_the_trained_window_with_one_line(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(ctxprobe.__file__).parents[1])}
    run = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "run", "--model", "local", "--lengths", "8k",
                          "--depths", "0.5", "--reps", "1", "--max-tokens", "40", "--store", "s.sqlite"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 2
    assert "trained window of 8,192 tokens" in run.stderr and "--allow-beyond-window" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "s.sqlite").exists()  # nothing sent, nothing stored


def test_trained_row_marks_the_boundary() -> None:
    from ctxprobe.report.plots import _trained_row

    assert _trained_row([1024, 4096, 8192], 8192) is None  # nothing past it: no mark
    assert _trained_row([1024, 8192, 8193], 8192) == 1
    assert _trained_row([1024, 8191, 8192, 12288], 8192) == 2
    assert _trained_row([9000, 12000], 8192) == -1  # every row is past it: the line sits on top
    assert _trained_row([1024, 12288], None) is None


def test_plots_draw_the_trained_window(monkeypatch, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from ctxprobe.analysis.grid import profile
    from ctxprobe.core.rows import ResultRow
    from ctxprobe.report import plots

    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig) or Path(path))
    rows = [ResultRow("niah", n, 0.5, r, "correct" if n < 9000 else "wrong", 1.0 if n < 9000 else 0.0, n)
            for n in (1024, 4096, 12288) for r in range(3)]
    prof = profile(rows, 0.856)[0]
    plots.curve_png(prof, tmp_path / "c.png", "t", trained_context=8192)
    plots.heatmap_png(prof, tmp_path / "h.png", "t", trained_context=8192)
    plots.curve_png(prof, tmp_path / "c2.png", "t")
    curve, heat, bare = (f.axes[0] for f in figs)

    def vlines(ax):
        return [ln for ln in ax.lines if len(set(ln.get_xdata())) == 1]

    assert any(ln.get_xdata()[0] == 8192 and "trained window 8K" in ln.get_label() for ln in vlines(curve))
    assert not any(ln.get_xdata()[0] == 8192 for ln in vlines(bare))
    hlines = [ln for ln in heat.lines if len(set(ln.get_ydata())) == 1]
    assert any(ln.get_ydata()[0] == 1.5 for ln in hlines)  # under the 4K row (index 1), above 12K
    assert any("trained window" in t.get_text() for t in heat.texts)


def test_phonebook_command_refuses_past_the_trained_window_and_has_the_flag(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(ctxprobe.__file__).parents[1])}
    run = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "phonebook", "--model", "local", "--lengths", "9k",
                          "--needles", "10", "--runs", "1", "--store", "s.sqlite", "--no-plots"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 2 and "trained window of 8,192" in run.stderr and "Traceback" not in run.stderr
    helped = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "phonebook", "--help"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert "--allow-beyond-window" in helped.stdout
