"""serve-sim driven by the official ``openai`` client, streaming and not, over real HTTP."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.sim.model import NOT_FOUND, make_sim
from ctxprobe.sim.server import SimServer
from ctxprobe.sim.wire import apply_stop, pieces

from test_sim_server import KEY, TOK, VALUE, niah

openai = pytest.importorskip("openai")


def client(server: SimServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=10)


def test_official_client_non_streaming_reads_the_answer_and_usage() -> None:
    with SimServer(make_sim("sim:perfect", TOK)) as server:
        reply = client(server).chat.completions.create(model="sim", messages=niah(), max_tokens=16)
    assert reply.choices[0].message.content == VALUE
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.prompt_tokens == TOK.count_chat(niah())
    assert reply.usage.completion_tokens == 1 and reply.usage.total_tokens == reply.usage.prompt_tokens + 1
    assert server.last_authorization == "Bearer sk-test"


def test_official_client_streams_chunks_then_usage() -> None:
    with SimServer(make_sim("sim:echo", TOK)) as server:
        messages = [{"role": "user", "content": "Numbers: 1234567 and 7654321 and 5555555."}]
        stream = client(server).chat.completions.create(
            model="sim", messages=messages, max_tokens=64, stream=True, stream_options={"include_usage": True})
        chunks = list(stream)
    content = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(content) == 3  # one delta per number: really streamed, not one blob
    assert "".join(content).split() == ["1234567", "7654321", "5555555"]
    assert chunks[0].choices[0].delta.role == "assistant"
    finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finals == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.prompt_tokens == TOK.count_chat(messages)
    assert chunks[-1].usage.completion_tokens == 3
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_without_include_usage_has_no_usage_chunk() -> None:
    with SimServer(make_sim("sim:perfect", TOK)) as server:
        chunks = list(client(server).chat.completions.create(model="sim", messages=niah(), stream=True))
    assert all(c.choices for c in chunks) and "".join(c.choices[0].delta.content or "" for c in chunks) == VALUE


def test_raw_sse_wire_ends_with_done() -> None:
    with SimServer(make_sim("sim:perfect", TOK)) as server:
        with httpx.stream("POST", f"{server.base_url}/chat/completions", timeout=10,
                          json={"model": "m", "messages": niah(), "stream": True}) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines)
    assert lines[-1] == "data: [DONE]"
    assert json.loads(lines[0][6:])["object"] == "chat.completion.chunk"


def test_n_choices_and_stop_sequences() -> None:
    with SimServer(make_sim("sim:echo", TOK)) as server:
        messages = [{"role": "user", "content": "Numbers: 1234567 and 7654321."}]
        reply = client(server).chat.completions.create(model="sim", messages=messages, n=3, max_tokens=32)
        assert [c.index for c in reply.choices] == [0, 1, 2]
        assert {c.message.content for c in reply.choices} == {"1234567 7654321"}
        assert reply.usage.completion_tokens == 3 * 2
        cut = client(server).chat.completions.create(model="sim", messages=messages, stop=[" 765"], max_tokens=32)
        assert cut.choices[0].message.content == "1234567" and cut.choices[0].finish_reason == "stop"
        assert cut.usage.completion_tokens == 1
        streamed = list(client(server).chat.completions.create(
            model="sim", messages=messages, n=2, stop="765", stream=True))
    by_choice = {0: "", 1: ""}
    for chunk in streamed:
        by_choice[chunk.choices[0].index] += chunk.choices[0].delta.content or ""
    assert by_choice == {0: "1234567 ", 1: "1234567 "}


def test_apply_stop_boundaries() -> None:
    assert apply_stop("abc STOP def", ("STOP",)) == ("abc ", True)
    assert apply_stop("abc STO", ("STOP",)) == ("abc STO", False)  # one character short: no stop
    assert apply_stop("x1y2", ("2", "1")) == ("x", True)  # earliest occurrence wins, not list order
    assert apply_stop("STOP", ("STOP",)) == ("", True)
    assert "".join(pieces(" a  b\nc ")) == " a  b\nc "


def test_models_retrieve_and_text_completions() -> None:
    with SimServer(make_sim("sim:perfect?ctx=4096", TOK), model_id="sim-perfect") as server:
        c = client(server)
        assert c.models.retrieve("sim-perfect").id == "sim-perfect"
        with pytest.raises(openai.NotFoundError):
            c.models.retrieve("gpt-4o")
        assert [m.id for m in c.models.list()] == ["sim-perfect"]
        prompt = niah()[0]["content"]
        done = c.completions.create(model="sim-perfect", prompt=prompt, max_tokens=8)
        assert done.choices[0].text == VALUE and done.object == "text_completion"
        assert done.usage.prompt_tokens == TOK.count(prompt) < TOK.count_chat(niah())  # no chat template
        streamed = "".join(ch.choices[0].text for ch in c.completions.create(
            model="sim-perfect", prompt=prompt, max_tokens=8, stream=True) if ch.choices)
        assert streamed == VALUE
    assert server.requests_served == 2


def test_malformed_requests_get_openai_shaped_400s() -> None:
    bad = [
        {"messages": niah()},  # no model
        {"model": "m", "messages": [{"role": "user"}]},  # no content
        {"model": "m", "messages": [{"role": "wizard", "content": "hi"}]},
        {"model": "m", "messages": niah(), "n": 0},
        {"model": "m", "messages": niah(), "stop": ["a", "b", "c", "d", "e"]},
        {"model": "m", "messages": niah(), "max_tokens": -1},
        {"model": "m", "messages": niah(), "temperature": 2.5},
        {"model": "m", "messages": niah(), "stream_options": {"include_usage": True}},  # without stream
        {"model": "m", "messages": niah(), "logprobs": True},
        {"model": "m", "prompt": [1, 2, 3]},
    ]
    with SimServer(make_sim("sim:perfect", TOK)) as server:
        for body in bad:
            path = "completions" if "prompt" in body else "chat/completions"
            response = httpx.post(f"{server.base_url}/{path}", json=body, timeout=5)
            assert response.status_code == 400, body
            error = response.json()["error"]
            assert set(error) == {"message", "type", "param", "code"} and error["type"] == "invalid_request_error"
        missing = httpx.post(f"{server.base_url}/chat/completions", json=bad[0], timeout=5).json()["error"]
        assert missing["param"] == "model"
        with pytest.raises(openai.BadRequestError):
            client(server).chat.completions.create(model="m", messages=[{"role": "user", "content": None}])
        ok = httpx.post(f"{server.base_url}/chat/completions", timeout=5,
                        json={"model": "m", "messages": niah(), "n": 1, "stop": ["a", "b", "c", "d"],
                              "temperature": 2.0})
        assert ok.status_code == 200  # the limits themselves are allowed
        assert httpx.get(f"{server.base_url}/chat/completions", timeout=5).status_code == 405


def test_context_overflow_is_a_400_with_the_openai_code() -> None:
    with SimServer(make_sim("sim:perfect?ctx=50", TOK)) as server:
        with pytest.raises(openai.BadRequestError) as info:
            client(server).chat.completions.create(model="m", messages=niah(n=100))
    assert info.value.code == "context_length_exceeded"


def test_truncating_server_applies_to_text_completions() -> None:
    prompt = niah(depth=0.0)[0]["content"]
    with SimServer(make_sim("sim:perfect", TOK), truncate_to=TOK.count(prompt) // 2) as server:
        done = client(server).completions.create(model="m", prompt=prompt, max_tokens=8)
    assert done.usage.prompt_tokens <= TOK.count(prompt) // 2
    assert done.choices[0].text == NOT_FOUND  # the needle at depth 0 was cut away
    assert KEY in prompt


def test_port_in_use_is_one_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(CtxprobeError, match=f"port {port} on 127.0.0.1 is already in use"):
            SimServer(make_sim("sim:perfect", TOK), port=port).start()
