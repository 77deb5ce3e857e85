"""The OpenAI-compatible provider over real loopback HTTP: sim server and a fault server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, PermanentError, TransientError
from ctxprobe.providers.openai_compat.api import OpenAICompatProvider
from ctxprobe.sim.model import make_sim
from ctxprobe.sim.server import SimServer
from ctxprobe.tokenizers.base import Message

from word_tokenizer import WordTokenizer

SECRET = "sk-test-SECRET-9f8e7d"


TOK = WordTokenizer()
KEY, VALUE = "brisk-lantern-482", "4819203"


def niah(n: int = 40, depth: float = 0.5, tag: str = "") -> list[Message]:
    sentences = ["The river bends slowly past the old mill."] * n
    sentences.insert(round(depth * n), f"The special magic number for {KEY} is {VALUE}.")
    sentences.insert(n // 3, "The special magic number for calm-river-117 is 7730155.")
    question = f"What is the special magic number for {KEY} mentioned in the text above?{tag} Answer with the number only."
    return [{"role": "user", "content": f"A long text follows.\n\n{' '.join(sentences)}\n\n{question}"}]


def run(provider: OpenAICompatProvider, coro_factory: Any) -> Any:
    """Run one coroutine and close the provider's client on the same loop."""

    async def main() -> Any:
        try:
            return await coro_factory()
        finally:
            await provider.aclose()

    return asyncio.run(main())


def request(messages: list[Message] | None = None, seed: int | None = None) -> GenerateRequest:
    return GenerateRequest(messages=messages or niah(), max_tokens=16, seed=seed)


# -- against the sim server ----------------------------------------------------------------


def test_the_provider_is_made_from_the_one_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """``from_spec`` reads the name and URL the model parser cut (no grammar of its own)."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    provider = OpenAICompatProvider.from_spec("openai-compat:qwen2.5@http://127.0.0.1:8000/v1/")
    assert (provider.model, provider.base_url) == ("qwen2.5", "http://127.0.0.1:8000/v1")
    assert OpenAICompatProvider.from_spec("openai-compat:org/model@8bit@https://x.example/v1").model == "org/model@8bit"
    for bad in ("openai-compat:qwen", "openai-compat:@http://x/v1", "openai-compat:m@ftp://x",
                "openai-compat:m@http://u:p@h/v1", "sim:perfect"):
        with pytest.raises(CtxprobeError) as info:
            OpenAICompatProvider.from_spec(bad)
        assert "\n" not in str(info.value) and "p@h" not in str(info.value)


def test_answers_through_sim_server_with_usage() -> None:
    with SimServer(make_sim("sim:perfect?ctx=8192", TOK)) as server:
        provider = resolve_provider(f"openai-compat:sim@{server.base_url}", TOK)
        assert isinstance(provider, OpenAICompatProvider) and provider.context_window is None

        async def go() -> Any:
            prompts = [niah(tag=f" ({i})") for i in range(8)]
            results = await asyncio.gather(*(provider.generate(request(p)) for p in prompts))
            return prompts, results, await provider.fetch_context_window()

        prompts, results, window = run(provider, go)
        assert [r.text for r in results] == [VALUE] * 8
        assert [r.prompt_tokens for r in results] == [TOK.count_chat(p) for p in prompts]
        assert all(r.completion_tokens == 1 and r.finish_reason == "stop" for r in results)
        assert str(results[0].extra["id"]).startswith("chatcmpl-")
        assert window == provider.context_window == 8192
        assert server.requests_served == 8 and set(server.prompt_counts.values()) == {1}


def test_truncating_server_reports_fewer_prompt_tokens() -> None:
    messages = niah(depth=0.0)
    sent = TOK.count_chat(messages)
    with SimServer(make_sim("sim:perfect", TOK), truncate_to=sent // 2) as server:
        provider = OpenAICompatProvider("sim", server.base_url)
        result = run(provider, lambda: provider.generate(request(messages)))
    assert result.prompt_tokens is not None and result.prompt_tokens <= sent // 2 < sent
    assert result.text != VALUE


def test_context_overflow_is_permanent() -> None:
    with SimServer(make_sim("sim:perfect?ctx=20", TOK)) as server:
        provider = OpenAICompatProvider("sim", server.base_url)
        with pytest.raises(PermanentError, match="HTTP 400.*exceeds the context window"):
            run(provider, lambda: provider.generate(request()))


# -- against a fault server ----------------------------------------------------------------


class FaultServer:
    """Answers by the first path segment (``/429/v1/...``) and records what it saw."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.released = threading.Event()  # set at close: the "slow" mode replies only then
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                meta = {"data": [{"id": "other"}, {"id": "m", "meta": {"n_ctx_train": 32768}}]}
                self.reply(200, json.dumps(meta).encode())

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                auth = self.headers.get("Authorization")
                outer.seen.append({"path": self.path, "auth": auth, "body": body})
                mode = self.path.split("/")[1]
                leak = json.dumps({"error": {"message": f"rejected token {auth}"}}).encode()
                if mode == "429":
                    self.reply(429, leak, {"Retry-After": "7"})
                elif mode == "429date":
                    when = email.utils.formatdate(time.time() + 30, usegmt=True)
                    self.reply(429, b"slow down", {"Retry-After": when})
                elif mode in ("500", "400", "401"):
                    self.reply(int(mode), leak)
                elif mode == "badjson":
                    self.reply(200, b"<html>proxy error</html>")
                elif mode == "nochoices":
                    self.reply(200, b'{"id": "x", "choices": []}')
                elif mode == "slow":  # answers only once the test is over: any reply comes too late
                    outer.released.wait(timeout=30)
                    self.reply(200, b"{}")
                else:
                    choice = {"message": {"content": "42"}, "finish_reason": "length"}
                    self.reply(200, json.dumps({"choices": [choice], "usage": {"prompt_tokens": 9}}).encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{mode}/v1"

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultServer]:
    monkeypatch.setenv("CTXPROBE_API_KEY", SECRET)
    server = FaultServer()
    yield server
    server.close()


def fail(url: str, **kw: Any) -> Exception:
    provider = OpenAICompatProvider.from_spec(f"openai-compat:m@{url}", **kw)
    try:
        run(provider, lambda: provider.generate(request()))
    except (TransientError, PermanentError) as exc:
        assert SECRET not in str(exc) and SECRET not in repr(exc) and SECRET not in repr(provider)
        return exc
    raise AssertionError("no error raised")


def test_request_body_and_auth_header(faults: FaultServer) -> None:
    provider = OpenAICompatProvider.from_spec(f"openai-compat:m@{faults.url('ok')}")
    result = run(provider, lambda: provider.generate(request(seed=5)))
    assert (result.text, result.finish_reason, result.prompt_tokens, result.completion_tokens) == ("42", "length", 9, None)
    run(provider, lambda: provider.generate(request()))
    first, second = faults.seen
    assert first["auth"] == f"Bearer {SECRET}"
    assert first["path"] == "/ok/v1/chat/completions"
    assert first["body"]["model"] == "m" and first["body"]["max_tokens"] == 16
    assert first["body"]["temperature"] == 0.0 and first["body"]["seed"] == 5
    assert "seed" not in second["body"]


def test_no_key_no_header(faults: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CTXPROBE_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = OpenAICompatProvider("m", faults.url("ok"))
    run(provider, lambda: provider.generate(request()))
    assert faults.seen[0]["auth"] is None


def test_http_errors_are_classified_without_leaking_the_key(faults: FaultServer) -> None:
    limited = fail(faults.url("429"))
    assert isinstance(limited, TransientError) and limited.retry_after == 7.0
    assert "HTTP 429" in str(limited) and "rejected token Bearer ***" in str(limited)
    dated = fail(faults.url("429date"))
    assert isinstance(dated, TransientError) and dated.retry_after is not None and 25 < dated.retry_after <= 30
    assert isinstance(fail(faults.url("500")), TransientError)
    for mode in ("400", "401"):
        exc = fail(faults.url(mode))
        assert isinstance(exc, PermanentError) and f"HTTP {mode}" in str(exc)
    assert all(s["auth"] == f"Bearer {SECRET}" for s in faults.seen)


def test_malformed_responses(faults: FaultServer) -> None:
    # a body that is not JSON is a transport glitch (retried); valid JSON of the wrong shape is not
    garbled = fail(faults.url("badjson"))
    assert isinstance(garbled, TransientError) and str(garbled).startswith("malformed response")
    assert "not JSON" in str(garbled)
    exc = fail(faults.url("nochoices"))
    assert isinstance(exc, PermanentError) and str(exc).startswith("malformed response") and "no choices" in str(exc)


def test_timeouts_and_refused_connections_are_transient(faults: FaultServer) -> None:
    # the server holds the reply until the test ends (an event): only the client's timeout can end the call
    slow = fail(faults.url("slow"), timeout=0.2)
    assert isinstance(slow, TransientError) and not faults.released.is_set()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    refused = fail(f"http://127.0.0.1:{free_port}/v1")
    assert isinstance(refused, TransientError) and "connection error" in str(refused)


def test_trained_window_is_not_taken_for_the_served_one(faults: FaultServer) -> None:
    # only meta.n_ctx_train (upstream llama-server's model_meta()) and no /props: the trained
    # window is known, the served one is not
    provider = OpenAICompatProvider("m", faults.url("ok"))
    assert run(provider, provider.fetch_context_window) is None
    assert provider.trained_context == 32768
    unreachable = OpenAICompatProvider("m", "http://127.0.0.1:9/v1", timeout=1.0)
    assert run(unreachable, unreachable.fetch_context_window) is None
