"""A tools layout (docs/layouts.md) counted through a vLLM-shaped server's own tokenizer:
``endpoint:`` sends the conversation's ``tools`` in the chat form of ``POST /tokenize`` (as
vLLM's ``TokenizeChatRequest`` takes them) and reads the rendered chat back through
``POST /detokenize``. The server is the sim server over loopback HTTP, its tokenizer
SmolLM2's with Qwen2.5's tool-rendering template (``hf_tools_dir``): the case counts what
the server's ``/tokenize`` counts for the messages and the tools, declaration included. A
server whose template drops tool messages (``local``, SmolLM2's own), or that has no
template to render ``tools`` with, is refused in one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctxprobe.sim.model import make_sim
from ctxprobe.sim.server import SimServer
from ctxprobe.tokenizers import resolve_tokenizer


@pytest.fixture(scope="module")
def tools_tok(hf_tools_dir: Path) -> Any:
    return resolve_tokenizer(f"hf:{hf_tools_dir}")


@pytest.fixture(scope="module")
def served(tools_tok: Any) -> Iterator[SimServer]:
    with SimServer(make_sim("sim:perfect", tools_tok), tools_tok, model_id="sim") as server:
        yield server


def _root(server: SimServer) -> str:
    return server.base_url[: -len("/v1")]


def test_detokenize_reads_its_body_as_vllm_does(served: SimServer, tools_tok: Any) -> None:
    ids = tools_tok.encode_chat([{"role": "user", "content": "The code is 4819203."}])
    for path in ("/detokenize", "/v1/detokenize"):
        answer = httpx.post(f"{_root(served)}{path}", timeout=30, json={"model": "sim", "tokens": ids})
        assert answer.status_code == 200 and answer.json() == {"prompt": tools_tok.decode(ids)}
    for bad in ({"tokens": "1 2"}, {"tokens": [1, "2"]}, {"tokens": [-1]}, {}):
        answer = httpx.post(f"{_root(served)}/detokenize", timeout=30, json=bad)
        assert answer.status_code == 400 and "'tokens'" in answer.json()["error"]["message"]
    tools = httpx.post(f"{_root(served)}/tokenize", timeout=30, json={
        "messages": [{"role": "user", "content": "Hi"}], "tools": [{"type": "function", "function": {
            "name": "read_file", "description": "Read one part of the shared notes."}}]}).json()
    plain = httpx.post(f"{_root(served)}/tokenize", timeout=30, json={"messages": [{"role": "user", "content": "Hi"}]})
    assert tools["count"] > plain.json()["count"]  # the body's tools rendered, though no message calls one
    bad_tools = httpx.post(f"{_root(served)}/tokenize", timeout=30, json={
        "messages": [{"role": "user", "content": "Hi"}], "tools": [{"name": "read_file"}]})
    assert bad_tools.status_code == 400 and "'tools' must be an array" in bad_tools.json()["error"]["message"]
