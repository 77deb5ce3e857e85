"""``plan`` asks the server it would use: slots from ``/props`` (then ``/slots``), and a
short timed probe of prefill speed; it says where its time estimate came from. Against
the real sim server on 127.0.0.1 (a llama.cpp-like one with slots whose prefill takes a
known time per computed token), and a URL where nothing listens."""

from __future__ import annotations

import json

import pytest

from ctxprobe.cli import main
from ctxprobe.models import resolve_provider
from ctxprobe.sim.prefix_cache import PrefixCacheSimServer
from ctxprobe.sim.server import SimServer
from ctxprobe.spec import make_spec
from ctxprobe.sweep.server_probe import ask_server
from ctxprobe.tokenizers import resolve_tokenizer

#: The sim server's prefill cost: 2,000 computed prompt tokens a second.
S_PER_TOKEN = 0.0005


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["plan", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_plan_reads_slots_and_times_prefill_on_a_llamacpp_like_server(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    tok = resolve_tokenizer("approx")
    with PrefixCacheSimServer(resolve_provider("sim:perfect", tok), tok, slots=2,
                              compute_s_per_token=S_PER_TOKEN) as server:
        model = f"openai-compat:sim@{server.base_url}"
        facts = ask_server(make_spec({"model": model, "lengths": "1k"}))
        assert facts is not None and facts.reachable and facts.slots == 2
        # the server sleeps 0.5 ms per computed token: the measured rate cannot beat that, and
        # a loaded machine only makes it slower; well above a GPU-less guess of 120
        assert facts.prefill is not None and 300 < facts.prefill < 2_000 * 1.05
        lines = _plan(capsys, "--model", model, "--lengths", "1k,2k", "--reps", "2", "--tokenizer", "approx")
        served, url = server.requests_served, server.base_url
    [time_line] = [x for x in lines if x.startswith("time: ")]
    assert "(measured on the server: " in time_line and " tok/s prefill" in time_line
    assert any(x.startswith(f"server: {url}") and "the server reports 2 slots" in x for x in lines)
    [sched] = [x for x in lines if x.startswith("scheduling: ")]
    assert sched.endswith("2 at a time (the server reports 2 slots; --concurrency 4)")
    assert served <= 2 * 4  # the probe is a few requests (two plans of four); nothing of the sweep is sent


def test_a_server_without_slots_and_one_that_is_down(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    tok = resolve_tokenizer("approx")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:  # no /props, no /slots (like vLLM's 404)
        lines = _plan(capsys, "--model", f"openai-compat:sim@{server.base_url}", "--lengths", "1k", "--reps", "2",
                      "--tokenizer", "approx")
    [sched] = [x for x in lines if x.startswith("scheduling: ")]
    assert "case by case" in sched and "the server reports no slots at /props or /slots" in sched
    down = _plan(capsys, "--model", "openai-compat:m@http://127.0.0.1:9/v1", "--lengths", "1k", "--reps", "2",
                 "--tokenizer", "approx")
    assert "server: http://127.0.0.1:9/v1 not reachable now (nothing answers there): slots and speed assumed" in down
    [time_line] = [x for x in down if x.startswith("time: ")]
    assert "(assumed: " in time_line
    # plan --json: the same facts, and where the time estimate came from
    assert main(["plan", "--model", "openai-compat:m@http://127.0.0.1:9/v1", "--lengths", "1k", "--reps", "2",
                 "--tokenizer", "approx", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["server"] in down and got["time"]["source"].startswith("assumed: ") and got["time"]["seconds"] > 0
    assert got["can_show"] and got["can_show"][0].startswith("can show (95%): niah: 10 cases a length")


def test_models_that_are_not_served_are_not_asked() -> None:
    assert ask_server(make_spec({"model": "sim:perfect", "lengths": "1k"})) is None
    assert ask_server(make_spec({"model": "local", "lengths": "1k"})) is None


@pytest.mark.slow
def test_plan_asks_llamacpps_native_server(capsys, monkeypatch) -> None:
    """serve-local's server (xllamacpp, the embedded SmolLM2) with two slots: plan reads them
    from /props and times its real prefill (tens to hundreds of tokens a second on CPU)."""
    pytest.importorskip("xllamacpp")
    import os

    from ctxprobe.providers.llamacpp.serve import start_local_server

    monkeypatch.setenv("COLUMNS", "400")
    server = start_local_server("local", port=0, slots=2, ctx=4096, n_threads=min(2, os.cpu_count() or 1))
    try:
        lines = _plan(capsys, "--model", server.model_spec, "--tokenizer", "endpoint", "--lengths", "1k,2k")
    finally:
        server.close()
    [sched] = [x for x in lines if x.startswith("scheduling: ")]
    assert sched.endswith("2 at a time (the server reports 2 slots; --concurrency 4)")
    [time_line] = [x for x in lines if x.startswith("time: ")]
    assert "(measured on the server: " in time_line
    [said] = [x for x in lines if x.startswith("server: ")]
    rate = float(said.split("measured ")[1].split(" tok/s")[0].replace(",", ""))
    assert 5 < rate < 20_000  # a real CPU rate, not a guess: a broken timing would be 0 or absurd
