"""decoding.top_p: validated, part of the run identity only when set, and sent to the server
(the phone-book post used temperature 0 with top_p 0.95)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.providers.anthropic.api import AnthropicProvider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.sim.server import SimServer
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.families.phonebook.task_grid import phonebook_spec
from ctxprobe.tokenizers import resolve_tokenizer

BASE = {"model": "sim:perfect", "tokenizer": "local", "lengths": "512", "depths": "0,1", "reps": 1}


@pytest.mark.parametrize("bad", [0, -0.1, 1.01])
def test_top_p_out_of_range_is_refused(bad) -> None:
    with pytest.raises(CtxprobeError, match="decoding.top_p"):
        make_spec({**BASE, "decoding": {"top_p": bad}})


def test_identity_only_changes_when_set() -> None:
    plain = make_spec(BASE)
    assert "top_p" not in plain.identity(tokenizer="local", version="x")["decoding"]
    ids = {make_spec({**BASE, "decoding": {"top_p": p}}).run_id(tokenizer="local", version="x")
           for p in (0.9, 0.95)}
    assert len(ids | {plain.run_id(tokenizer="local", version="x")}) == 3


def test_top_p_reaches_the_server(tmp_path) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = server.start()
        run_sweep(make_spec({**BASE, "model": f"openai-compat:sim@{url}", "decoding": {"top_p": 0.95}}),
                  tmp_path / "a.sqlite", progress=False)
        assert server.last_decoding["top_p"] == 0.95
        run_sweep(make_spec({**BASE, "model": f"openai-compat:sim@{url}"}), tmp_path / "b.sqlite", progress=False)
        assert "top_p" not in server.last_decoding  # unset: nothing sent, the server's default applies


def test_cli_and_phonebook_take_top_p(tmp_path) -> None:
    assert phonebook_spec(model="sim:perfect", entries=["100"], needles=[10], runs=1, top_p=0.95).decoding.top_p == 0.95
    out = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "run", "--model", "sim:perfect", "--lengths", "512",
                          "--depths", "1", "--reps", "1", "--top-p", "2", "--store", str(tmp_path / "s.sqlite")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "top_p" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_anthropic_sends_top_p_only_where_the_sdk_names_it() -> None:
    """anthropic >= 2.0 sends anthropic-version 2026-10-21, whose MessageCreateParams name no
    sampling field: top_p is not sent (plan and run say decoding is the provider's default);
    an SDK that still names it gets top_p alone, never with temperature."""
    from ctxprobe.providers.anthropic.rules import sampling_settable

    provider = AnthropicProvider.__new__(AnthropicProvider)  # request shaping only: no client, no key
    provider.model, provider.options = "claude-sonnet-4-5", type("O", (), {"thinking": None, "effort": None})()
    provider._api_rules = None  # the Models API not read: the table's rules
    body = provider.request_body(GenerateRequest([{"role": "user", "content": "hi"}], max_tokens=8, top_p=0.9))
    if sampling_settable():  # the installed SDK's MessageCreateParams names them
        assert body["top_p"] == 0.9 and "temperature" not in body
    else:
        assert not {"top_p", "temperature", "top_k"} & set(body) and "extra_body" not in body