"""A tools layout (docs/layouts.md) counted through a vLLM-shaped server's own tokenizer:
``endpoint:`` sends the conversation's ``tools`` in the chat form of ``POST /tokenize`` (as
vLLM's ``TokenizeChatRequest`` takes them) and reads the rendered chat back through
``POST /detokenize``. The server is the sim server over loopback HTTP, its tokenizer
SmolLM2's with Qwen2.5's tool-rendering template (``hf_tools_dir``): the case counts what
the server's ``/tokenize`` counts for the messages and the tools, declaration included. A
server whose template drops the tool call and declaration, fails on tool messages
(``local``, SmolLM2's own) or is missing (no template to render ``tools`` with) is refused
in one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctxprobe.cases.families import make_labelled
from ctxprobe.core.case import Cell
from ctxprobe.core.tools import READ_TOOL, check_renders_tools
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.sim.model import make_sim
from ctxprobe.sim.server import SimServer
from ctxprobe.spec import PromptLayout
from ctxprobe.tokenizers import resolve_tokenizer
from ctxprobe.tokenizers.endpoint import EndpointTokenizer

from word_tokenizer import WordTokenizer


@pytest.fixture(scope="module")
def tools_tok(hf_tools_dir: Path) -> Any:
    return resolve_tokenizer(f"hf:{hf_tools_dir}")


@pytest.fixture(scope="module")
def served(tools_tok: Any) -> Iterator[SimServer]:
    with SimServer(make_sim("sim:perfect", tools_tok), tools_tok, model_id="sim") as server:
        yield server


def _root(server: SimServer) -> str:
    return server.base_url[: -len("/v1")]


def test_a_tools_case_counts_what_the_servers_tokenize_counts(served: SimServer, tools_tok: Any) -> None:
    tok = EndpointTokenizer(served.base_url, model="sim", name="vllm-shaped+tools-template")
    assert tok.kind == "vllm" and tok.renders_tools  # detected from its /tokenize, not told
    check_renders_tools(tok)  # the probe's call, result and declaration all came back through /detokenize
    fam, params = make_labelled("niah", {}, BuildContext(tok, None, PromptLayout(messages="tools", turn_tokens=300)))
    case = fam.generate(Cell("niah", 1024, 0.3), 0, seed=5, params=params)
    assert sum(1 for m in case.messages if m["role"] == "tool") >= 2
    counted = tok.count_chat(case.messages)
    assert case.token_count == counted and 0 <= 1024 - counted <= fill_tolerance(1024)
    root = _root(served)
    full = httpx.post(f"{root}/tokenize", timeout=30, json={
        "model": "sim", "messages": case.messages, "tools": [READ_TOOL], "add_generation_prompt": True}).json()
    bare = httpx.post(f"{root}/tokenize", timeout=30, json={
        "model": "sim", "messages": case.messages, "add_generation_prompt": True}).json()
    # the server's count of the whole request is the case's; without the declaration it reads fewer
    assert full["count"] == counted == len(full["tokens"]) and full["tokens"] == tok.encode_chat(case.messages)
    assert bare["count"] < counted
    # the same template rendered in process (the tool the messages imply) agrees token for token
    assert tools_tok.encode_chat(case.messages) == full["tokens"]
    # and the server's chat route reports that many prompt tokens for the request as sent
    reply = httpx.post(f"{served.base_url}/chat/completions", timeout=30, json={
        "model": "sim", "messages": case.messages, "tools": [READ_TOOL], "max_tokens": 1, "temperature": 0}).json()
    assert reply["usage"]["prompt_tokens"] == counted
    rendered = tok.render_chat(case.messages)  # /tokenize ids -> /detokenize
    assert READ_TOOL["function"]["description"] in rendered and case.messages[2]["content"] in rendered
    assert rendered == tools_tok.render_chat(case.messages)


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


#: A template that keeps each message's text and nothing of tools.
PLAIN_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content or '' }}<|im_end|>\n{% endfor %}"
                  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def test_a_server_whose_template_cannot_render_tools_is_refused_in_one_line(hf_tools_dir: Path,
                                                                            tmp_path: Path) -> None:
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (plain_dir / name).write_bytes((hf_tools_dir / name).read_bytes())
    (plain_dir / "chat_template.jinja").write_text(PLAIN_TEMPLATE, encoding="utf-8")
    for tokenizer, words in ((resolve_tokenizer(f"hf:{plain_dir}"), "drops the tool call, the tool declaration"),
                             # SmolLM2's own (local): a tool call's None content fails its template
                             (resolve_tokenizer("local"), "cannot render tool messages .*HTTP 400")):
        with SimServer(make_sim("sim:perfect", tokenizer), tokenizer) as server:
            tok = EndpointTokenizer(server.base_url)
            assert tok.renders_tools
            with pytest.raises(CtxprobeError, match=words) as err:
                check_renders_tools(tok)
            assert "\n" not in str(err.value) and tok.name in str(err.value)
    words = WordTokenizer()  # no chat template to render tools with: the server answers 400
    with SimServer(make_sim("sim:perfect", words), words) as server:
        with pytest.raises(CtxprobeError, match="cannot render tool messages .*HTTP 400.*no chat template") as err:
            check_renders_tools(EndpointTokenizer(server.base_url))
        assert "\n" not in str(err.value)
        # a body without tools is counted as before
        plain = [{"role": "user", "content": "What is the code?"}]
        assert EndpointTokenizer(server.base_url).count_chat(plain) == words.count_chat(plain)
