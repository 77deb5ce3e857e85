"""Decoding as a prompt variant: ``t0:temperature=0, t07:temperature=0.7+samples=5``.

The model is ``sim:perfect`` behind the loopback sim server, read over HTTP by the
``openai-compat`` provider. The sim reads the prompt like a model (never the answer key)
and has known sampling noise: at temperature t each answer is a miss with probability
min(1, t × tnoise), drawn from the prompt and the request's ``seed`` (ctxprobe.sim.sampling).
So temperature 0.7 must come out significantly worse than 0, the k samples of a case must
be k stored cases with k distinct seeds, and what the server received must carry each
variant's decoding. The ``seed`` field the samples carry is OpenAI's
``CompletionCreateParams.seed: Optional[int]`` (and google-genai's
``GenerateContentConfig.seed``): a sample's request body is checked against the SDKs' own
types in tests/integration/models/test_contract_requests.py; Anthropic's Messages API has none, and
none is sent."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.core.variant import sample_nonce
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.plan.grid import planned_cases, summarize
from ctxprobe.report.compare_runs import load_run_cases
from ctxprobe.report.load import load_report
from ctxprobe.sim.server import SimServer
from ctxprobe.spec import make_spec
from ctxprobe.spec.variants import expand_variants, parse_variants
from ctxprobe.store import open_existing
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

SRC = str(Path(__file__).resolve().parents[2] / "src")
VARIANTS = "t0:temperature=0, t07:temperature=0.7+samples=5, p9:top_p=0.9"


def spec_for(model: str, variants: str = VARIANTS, **grid: object):
    data = {"model": model, "tokenizer": "local", "lengths": "1k,2k", "depths": "0,1", "reps": 4,
            "families": expand_variants({"niah": {}}, parse_variants(variants)), **grid}
    return make_spec(data)


def test_temperature_is_worse_paired_and_reaches_the_server(tmp_path: Path) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect?tnoise=0.5", tok), tok) as server:
        url = server.start()
        spec = spec_for(f"openai-compat:sim@{url}")
        run_id = run_sweep(spec, tmp_path / "d.sqlite", progress=False).run_id
        received = list(server.decodings)
    n = 2 * 2 * 4  # cases per variant: lengths x depths x reps
    # what the server received: each variant's decoding on its own requests only
    hot = [d for d in received if d["temperature"] == 0.7]
    assert len(hot) == 5 * n and all("top_p" not in d for d in hot)
    assert Counter(d["seed"] for d in hot) == Counter({sample_nonce(None, i): n for i in range(5)})
    nucleus = [d for d in received if d.get("top_p") == 0.9]
    assert len(nucleus) == n and all(d["temperature"] == 0 and "seed" not in d for d in nucleus)
    assert sum(1 for d in received if d["temperature"] == 0 and "top_p" not in d and d["max_tokens"] == 48) == n
    # k samples are k stored cases of one prompt, with distinct ids
    with open_existing(tmp_path / "d.sqlite") as st:
        recs = list(st.iter_case_records(run_id))
    hot_recs = [r for r in recs if r["family"] == "niah~t07"]
    assert len(hot_recs) == 5 * n and len({r["case_id"] for r in hot_recs}) == 5 * n
    assert {r["case_id"].rsplit("/", 1)[1] for r in hot_recs} == {f"s{i}" for i in range(5)}
    by_prompt = Counter(r["prompt_hash"] for r in recs)
    assert set(by_prompt.values()) == {5 + 1 + 1}  # same content and prompt under every variant and sample
    # the report: the decoding effect with the right sign, paired on the same cases, k said
    report = load_report(run_id, tmp_path / "d.sqlite")
    by_variant = {v["variant"]: v for v in report.variants}
    hot_v, nucleus_v = by_variant["niah~t07"], by_variant["niah~p9"]
    assert hot_v["reference"] == "niah~t0" and hot_v["paired"] == n
    assert hot_v["samples"] == {"reference": 1, "variant": 5} and "sign-flip" in hot_v["tests"]
    (fam,) = hot_v["families"]
    assert fam["pooled"]["significant"] and fam["pooled"]["by_samples"] and fam["mean_diff"] < 0
    assert fam["mean_diff_ci"][1] < 0 and hot_v["verdict"].startswith("WORSE")
    # about 0.35 of the samples miss (P(miss) = 0.7 x 0.5): the measured mean difference is near it
    assert -0.5 < fam["mean_diff"] < -0.2
    # top_p alone leaves this sim exact: no difference, tested as before (McNemar, k = 1)
    assert nucleus_v["samples"] == {"reference": 1, "variant": 1} and "McNemar" in nucleus_v["tests"]
    assert nucleus_v["families"][0]["pooled"]["a_only"] == nucleus_v["families"][0]["pooled"]["b_only"] == 0
    assert any(line.startswith("variant niah~t07 vs niah~t0: WORSE") for line in report.notes)
    # `compare` and `check` read a stored run's k samples of a case as that one case, too
    loaded = load_run_cases(run_id, tmp_path / "d.sqlite")
    hot_cases = [c for c in loaded.cases.values() if c.family == "niah~t07"]
    assert len(hot_cases) == n and all(c.samples is not None and len(c.samples) == 5 for c in hot_cases)
    assert all(c.samples is None for c in loaded.cases.values() if c.family == "niah~t0")


def test_the_plan_counts_every_sample() -> None:
    spec = spec_for("sim:perfect")
    planned = list(planned_cases(spec))
    assert len(planned) == 16 * (1 + 5 + 1) and len({p.case_id for p in planned}) == len(planned)
    assert summarize(spec).requests == len(planned)


def _responses(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store) as db:
            return int(db.execute("SELECT count(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # tables not made yet
        return 0


def test_killed_run_resends_only_the_missing_samples(tmp_path: Path) -> None:
    tok = resolve_tokenizer("local")
    store = tmp_path / "k.sqlite"
    variants = "t0:temperature=0, t07:temperature=0.7+samples=5"
    with SimServer(resolve_provider("sim:perfect?latency=0.1", tok), tok) as server:
        url = server.start()
        args = ["run", "--model", f"openai-compat:sim@{url}", "--tokenizer", "local", "--lengths", "1k",
                "--depths", "0.5", "--reps", "3", "--variants", variants, "--concurrency", "1",
                "--store", str(store), "--no-plots", "--no-progress"]
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.Popen([sys.executable, "-m", "ctxprobe.cli", *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while _responses(store) < 6 and proc.poll() is None:
                time.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        kept = _responses(store)
        assert 6 <= kept < 3 + 15, "the run ended before it could be killed part way"
        before = server.requests_served
        spec = make_spec({"model": f"openai-compat:sim@{url}", "tokenizer": "local", "lengths": "1k",
                          "depths": "0.5", "reps": 3, "concurrency": 1,
                          "families": expand_variants({"niah": {}}, parse_variants(variants))})
        result = run_sweep(spec, store, progress=False)
        sweep_requests = result.sent
        assert result.resumed and result.already_done == kept
    assert sweep_requests == 3 + 15 - kept  # only the missing cases and samples were sent again
    assert server.requests_served - before >= sweep_requests  # (plus the preflight's probes)
    with open_existing(store) as st:
        ids = [r["case_id"] for r in st.iter_case_records(result.run_id)]
    assert len(ids) == len(set(ids)) == 18 and sum(i.endswith(("/s0", "/s1", "/s2", "/s3", "/s4")) for i in ids) == 15


@pytest.mark.parametrize(("text", "fragment"), [
    ("a, b:temperature=-0.1", "temperature=-0.1 must be a number from 0 to 2"),
    ("a, b:temperature=2.5", "from 0 to 2"),
    ("a, b:temperature=hot", "must be a number"),
    ("a, b:top_p=0", "top_p=0 must be a number in (0, 1]"),
    ("a, b:top_p=1.01", "in (0, 1]"),
    ("a, b:samples=0", "samples=0 must be a whole number from 1"),
    ("a, b:samples=2.5", "whole number"),
    ("a, b:samples=true", "whole number"),
    ("a, b:max_tokens=64", "one limit for the whole sweep"),
])
def test_bad_decoding_values_are_one_line_errors(text: str, fragment: str) -> None:
    with pytest.raises(CtxprobeError, match=fragment.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        parse_variants(text)


def test_bad_decoding_on_the_command_line_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    code = main(["run", "--model", "sim:perfect", "--lengths", "1k", "--variants", "a, b:samples=0",
                 "--store", str(store), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "samples=0" in err and len(err.splitlines()) == 1 and not store.exists()


@pytest.mark.parametrize(("model", "variants", "fragment", "extra"), [
    ("anthropic:claude-sonnet-4-5", "a, b:temperature=0.7+top_p=0.9", "never both", []),
    ("anthropic:claude-opus-4-7", "a, b:temperature=0.7", "takes no temperature or top_p", []),
    ("anthropic:claude-sonnet-4-5?thinking=2048", "a, b:top_p=0.9", "thinking takes the default sampling", []),
    ("anthropic:claude-sonnet-4-5", "a, b:temperature=0.7", "thinking takes the default sampling",
     ["--reasoning-budgets", "0,2048"]),
    ("openai:o3", "a, b:temperature=0.7", "without temperature or top_p", []),
])
def test_a_decoding_the_provider_would_not_send_is_refused_before_sending(
        model: str, variants: str, fragment: str, extra: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000")
    # nothing listens here: a request sent would be a connection error, not this refusal
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")
    fragment = _claude_fragment(model, fragment)
    store = tmp_path / "s.sqlite"
    code = main(["run", "--model", model, "--tokenizer", "local", "--lengths", "1k", "--variants", variants,
                 *extra, "--store", str(store), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err.strip()
    error = err[err.index("error:"):]  # after any warning about the model itself
    assert code != 0 and fragment in error and "variant niah~b" in error and len(error.splitlines()) == 1
    assert "Traceback" not in err and not store.exists()


def _claude_fragment(model: str, fragment: str) -> str:
    """Under anthropic-version 2026-10-21 (anthropic SDK >= 2.0) Claude takes no decoding at all."""
    from ctxprobe.providers.anthropic.rules import SAMPLING_NOTE, sampling_settable

    return SAMPLING_NOTE if model.startswith("anthropic:") and not sampling_settable() else fragment


def test_a_decoding_the_provider_sends_is_not_refused() -> None:
    from ctxprobe.providers.anthropic.api import AnthropicProvider
    from ctxprobe.providers.anthropic.rules import sampling_settable

    if not sampling_settable():
        pytest.skip("the installed anthropic SDK sends anthropic-version 2026-10-21: no decoding is sent")

    claude = AnthropicProvider.__new__(AnthropicProvider)  # request shaping only: no client, no key
    claude.model, claude.name = "claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"
    claude.options = type("O", (), {"thinking": None, "effort": None})()
    assert claude.sampling_refusal(0.7, None) is None and claude.sampling_refusal(0.0, 0.9) is None
    assert claude.sampling_refusal(0.7, 0.9) is not None


@pytest.mark.parametrize(("model", "flags", "fragment"), [
    ("anthropic:claude-sonnet-4-5", ["--temperature", "0.7", "--top-p", "0.9"], "never both"),
    ("anthropic:claude-opus-4-7", ["--temperature", "0.7"], "takes no temperature or top_p"),
    ("anthropic:claude-sonnet-4-5?thinking=2048", ["--temperature", "0.5"], "thinking takes the default sampling"),
    ("openai:o3", ["--temperature", "0.7"], "without temperature or top_p"),
])
def test_the_sweeps_own_decoding_is_refused_when_it_would_not_be_sent(
        model: str, flags: list[str], fragment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The same rule for a sweep without variants: asking for a decoding the request would
    silently go without is one line, before anything is sent."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")
    fragment = _claude_fragment(model, fragment)
    store = tmp_path / "s.sqlite"
    code = main(["run", "--model", model, "--tokenizer", "local", "--lengths", "1k", *flags,
                 "--store", str(store), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err.strip()
    error = err[err.index("error:"):]
    assert code != 0 and fragment in error and "--temperature/--top-p" in error and len(error.splitlines()) == 1
    assert "Traceback" not in err and not store.exists()


@pytest.mark.parametrize(("model", "flags"), [
    ("anthropic:claude-sonnet-4-5", ["--top-p", "0.9"]),  # top_p alone with the default temperature
    ("anthropic:claude-opus-4-7", []),  # the default decoding asks for nothing
    ("openai:o3", []),
    ("openai:o3", ["--top-p", "0.95"]),  # the phone-book post's default top_p: unsent, not refused
])
def test_a_sweep_decoding_the_provider_sends_is_not_refused(model: str, flags: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxprobe.models import resolve_provider
    from ctxprobe.spec import make_spec
    from ctxprobe.sweep.run import check_decoding_variants

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000")
    extra = {"decoding": {"top_p": float(flags[1])}} if flags else {}
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": "1k", **extra})
    check_decoding_variants(spec, resolve_provider(model, None))  # type: ignore[arg-type]
