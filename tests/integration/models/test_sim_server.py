"""The loopback OpenAI-compatible sim server, spoken to over real HTTP."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError
from ctxprobe.sim.model import NOT_FOUND, make_sim
from ctxprobe.sim.server import SimServer, left_truncate
from ctxprobe.tokenizers.base import Message

from word_tokenizer import WordTokenizer


TOK = WordTokenizer()
KEY, VALUE = "brisk-lantern-482", "4819203"
FILLER = "The river bends slowly past the old mill."


def niah(n: int = 40, depth: float = 0.5, tag: str = "") -> list[Message]:
    sentences = [FILLER] * n
    sentences.insert(round(depth * n), f"The special magic number for {KEY} is {VALUE}.")
    question = f"What is the special magic number for {KEY} mentioned in the text above?{tag} Answer with the number only."
    intro = "A long text follows. Hidden in it are special magic numbers, each tied to a key."
    return [{"role": "user", "content": f"{intro}\n\n{' '.join(sentences)}\n\n{question}"}]


def chat(base: str, messages: list[Message], **extra: object) -> httpx.Response:
    body = {"model": "sim", "messages": messages, "max_tokens": 16, **extra}
    return httpx.post(f"{base}/chat/completions", json=body, timeout=10)


def test_chat_completion_wire_format() -> None:
    with SimServer(make_sim("sim:perfect", TOK)) as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        response = chat(server.base_url, niah())
        assert response.status_code == 200
        data = response.json()
        assert data["choices"][0]["message"]["content"] == VALUE
        assert data["choices"][0]["finish_reason"] == "stop"
        assert data["usage"]["prompt_tokens"] == TOK.count_chat(niah())
        assert data["usage"]["completion_tokens"] == 1
        assert data["id"].startswith("chatcmpl-") and data["model"] == "sim"
        assert isinstance(data["created"], int)
        assert server.requests_served == 1


def test_models_tokenize_health() -> None:
    with SimServer(make_sim("sim:perfect?ctx=4096", TOK)) as server:
        base = server.base_url
        root = base.removesuffix("/v1")
        model = httpx.get(f"{base}/models", timeout=5).json()["data"][0]
        assert model["id"] == "sim:perfect?ctx=4096" and model["max_model_len"] == 4096
        tokenized = httpx.post(f"{root}/tokenize", json={"messages": niah()}, timeout=5).json()
        assert tokenized["count"] == TOK.count_chat(niah()) == len(tokenized["tokens"])
        for field in ("content", "prompt"):
            plain = httpx.post(f"{root}/tokenize", json={field: "a b, c"}, timeout=5).json()
            assert plain["tokens"] == TOK.encode("a b, c") and plain["count"] == 4
        assert httpx.get(f"{root}/health", timeout=5).json() == {"status": "ok"}
        assert httpx.get(f"{root}/nowhere", timeout=5).status_code == 404
        assert server.requests_served == 0  # only chat completions are counted
    with SimServer(make_sim("sim:perfect", TOK)) as server:
        assert "max_model_len" not in httpx.get(f"{server.base_url}/models", timeout=5).json()["data"][0]


def test_bad_requests_get_400() -> None:
    with SimServer(make_sim("sim:perfect?ctx=50", TOK)) as server:
        base = server.base_url
        assert httpx.post(f"{base}/chat/completions", content=b"{oops", timeout=5).status_code == 400
        assert chat(base, []).status_code == 400
        too_long = chat(base, niah(n=100))
        assert too_long.status_code == 400
        assert "exceeds the context window" in too_long.json()["error"]["message"]


def test_truncating_server_reports_fewer_tokens_and_loses_the_start() -> None:
    full = TOK.count_chat(niah(depth=0.0))
    with SimServer(make_sim("sim:perfect", TOK), truncate_to=full // 2) as server:
        early = chat(server.base_url, niah(depth=0.0)).json()
        late = chat(server.base_url, niah(depth=1.0)).json()
    assert early["usage"]["prompt_tokens"] <= full // 2 < full
    assert early["choices"][0]["message"]["content"] == NOT_FOUND
    assert late["choices"][0]["message"]["content"] == VALUE
    short = niah(n=2)
    with SimServer(make_sim("sim:perfect", TOK), truncate_to=full) as server:
        untouched = chat(server.base_url, short).json()
    assert untouched["usage"]["prompt_tokens"] == TOK.count_chat(short)


def test_left_truncate_keeps_the_tail() -> None:
    messages = niah()
    cut = left_truncate(messages, TOK, 60)
    assert TOK.count_chat(cut) <= 60 < TOK.count_chat(cut[:-1] + [{"role": "user", "content": "x " + cut[-1]["content"]}])
    assert messages[-1]["content"].endswith(cut[-1]["content"])
    assert left_truncate(messages, TOK, 10_000) is messages


class Rendezvous:
    """A provider whose calls all wait until ``n`` of them are in flight at once: the
    requests finish only if the server serves them concurrently (an event, not a clock;
    the timeout only bounds a server that serialises, which then answers 500)."""

    name = "rendezvous"
    max_concurrency = None
    context_window = None

    def __init__(self, n: int) -> None:
        self.n = n
        self.in_flight = 0
        self.peak = 0
        self._all_in: asyncio.Event | None = None

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        if self._all_in is None:  # made on the server's loop
            self._all_in = asyncio.Event()
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.in_flight == self.n:
            self._all_in.set()
        try:
            await asyncio.wait_for(self._all_in.wait(), timeout=5)
        except asyncio.TimeoutError:
            raise PermanentError(f"only {self.peak} of {self.n} requests were ever in flight together") from None
        finally:
            self.in_flight -= 1
        return GenerateResult(text=request.messages[-1]["content"][-5:], finish_reason="stop")

    async def aclose(self) -> None:
        return None


def test_serves_eight_requests_concurrently_and_counts_each_prompt_once() -> None:
    provider = Rendezvous(8)
    with SimServer(provider, TOK) as server:
        prompts = [niah(n=5, tag=f" ({i})") for i in range(8)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            responses = list(pool.map(lambda p: chat(server.base_url, p), prompts))
        assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
        assert provider.peak == 8  # all eight were being served at the same moment
        assert server.requests_served == 8
        assert len(server.prompt_counts) == 8 and set(server.prompt_counts.values()) == {1}


def test_stop_releases_the_port() -> None:
    server = SimServer(make_sim("sim:echo", TOK))
    base = server.start()
    assert server.start() == base  # idempotent
    server.stop()
    server.stop()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{base}/models", timeout=2)
