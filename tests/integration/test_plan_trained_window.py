"""``ctxprobe plan`` warns, as ``run`` does before sending, about lengths past the model's
trained window (read from the tokenizer's files: nothing is loaded or sent), at the same
boundary: prompt + output == trained window is inside, one token more is past it."""

from __future__ import annotations

import subprocess
import sys

from ctxprobe.cases.sizing import beyond_trained_warning, plan_beyond_trained
from ctxprobe.spec import make_spec
from ctxprobe.sweep import run as sweep_run
from ctxprobe.tokenizers import resolve_tokenizer


def _plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", "plan", *args], capture_output=True, text=True,
                          timeout=120)


def test_plan_warns_past_the_trained_window() -> None:
    proc = _plan("--model", "sim:perfect", "--lengths", "4k,9k", "--depths", "0.5", "--reps", "1")
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stderr.split())
    assert "length(s) 9,216 (+ " in said and "pass sim:perfect's trained context of 8,192 tokens" in said
    assert "4,096" not in said


def test_plan_is_silent_inside_the_window() -> None:
    proc = _plan("--model", "sim:perfect", "--lengths", "4k", "--depths", "0.5", "--reps", "1")
    assert proc.returncode == 0 and "trained context" not in proc.stderr


def test_plan_boundary_is_runs_boundary() -> None:
    at = make_spec({"model": "sim:perfect", "lengths": str(8192 - 40), "decoding": {"max_tokens": 40}})
    past = make_spec({"model": "sim:perfect", "lengths": str(8192 - 39), "decoding": {"max_tokens": 40}})
    assert plan_beyond_trained(at, None) is None
    warning = plan_beyond_trained(past, None)
    assert warning is not None and "8,153" in warning
    # the sweep's own check is the same function (moved below the sweep, not copied)
    assert sweep_run.beyond_trained_warning is beyond_trained_warning
    tok = resolve_tokenizer("local")
    assert beyond_trained_warning(past, None, tok, {("niah", 8153): 8153}) == warning


def test_ruler_lengths_hold_their_output() -> None:
    # RULER's lengths include the output: a 8192 ruler case is inside the 8192 window
    spec = make_spec({"model": "sim:perfect", "lengths": "8192",
                      "families": {"niah_single_1": {"family": "ruler", "task": "niah_single_1"}}})
    assert plan_beyond_trained(spec, None) is None


def test_plan_stays_silent_when_no_trained_window_is_known() -> None:
    spec = make_spec({"model": "openai:gpt-4o-mini", "lengths": "200k"})  # tiktoken: no window in its files
    assert plan_beyond_trained(spec, None) is None
