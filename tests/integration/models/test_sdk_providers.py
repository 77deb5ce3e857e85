"""openai:, anthropic: and gemini: through their real SDKs against loopback fake APIs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, TransientError

from fake_llm_apis import FakeServer, anthropic_route, gemini_route, openai_route

SECRET = "sk-SENTINEL-do-not-leak-7c1f0a9e55"
MESSAGES = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "What is the code?"}]

SETUPS: dict[str, tuple[str, Any, str, str]] = {
    # provider: (key env var, route, base-url env var, base-url suffix the SDK expects)
    "openai": ("OPENAI_API_KEY", openai_route, "OPENAI_BASE_URL", "/v1"),
    "anthropic": ("ANTHROPIC_API_KEY", anthropic_route, "ANTHROPIC_BASE_URL", ""),
    "gemini": ("GEMINI_API_KEY", gemini_route, "GEMINI_BASE_URL", ""),
}


@pytest.fixture(params=sorted(SETUPS))
def api(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, FakeServer]]:
    provider = request.param
    key_var, route, url_var, suffix = SETUPS[provider]
    pytest.importorskip({"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}[provider])
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(key_var, SECRET)
    with FakeServer(route) as server:
        monkeypatch.setenv(url_var, server.url + suffix)
        yield provider, server


def run(provider_name: str, model: str, **req: Any) -> GenerateResult:
    async def go() -> GenerateResult:
        provider = resolve_provider(f"{provider_name}:{model}", None)  # type: ignore[arg-type]
        try:
            return await provider.generate(GenerateRequest(messages=MESSAGES, max_tokens=req.get("max_tokens", 32)))
        finally:
            await provider.aclose()

    return asyncio.run(go())


def test_plain_answer_and_usage(api: tuple[str, FakeServer]) -> None:
    name, server = api
    result = run(name, "ok")
    assert result.text == "The code is 4819203."
    assert result.finish_reason == "stop"
    assert result.prompt_tokens == {"openai": 21, "anthropic": 34, "gemini": 40}[name]
    path, headers, body = server.requests[-1]
    if name == "anthropic":  # the system message is lifted into the `system` parameter
        assert body["system"] == "Answer briefly." and [m["role"] for m in body["messages"]] == ["user"]
    if name == "gemini":
        assert body["systemInstruction"]["parts"][0]["text"] == "Answer briefly."
    if name == "openai":
        assert body["temperature"] == 0 and body["max_tokens"] == 32


def test_rate_limit_is_transient_with_retry_after(api: tuple[str, FakeServer]) -> None:
    name, server = api
    with pytest.raises(TransientError) as info:
        run(name, "rate")
    assert info.value.retry_after == {"openai": 7.0, "anthropic": 3.0, "gemini": 11.0}[name]
    assert len(server.requests) == 1  # the SDK did not retry on its own: the runner does


def test_server_error_is_transient_and_not_retried_by_sdk(api: tuple[str, FakeServer]) -> None:
    name, server = api
    with pytest.raises(TransientError, match="HTTP 5"):
        run(name, "boom")
    assert len(server.requests) == 1


def test_key_never_in_error_text(api: tuple[str, FakeServer]) -> None:
    name, server = api
    with pytest.raises((PermanentError, TransientError)) as info:
        run(name, "auth")
    assert isinstance(info.value, PermanentError)
    assert SECRET in str(server.requests[-1][1])  # the server did receive it...
    for text in (str(info.value), repr(info.value), str(info.value.args)):
        assert SECRET not in text and SECRET[:12] not in text and SECRET[-8:] not in text
    provider = resolve_provider(f"{name}:ok", None)  # type: ignore[arg-type]
    assert SECRET not in repr(provider) and SECRET not in str(provider.__dict__.get("name"))


def test_reasoning_kept_apart_from_answer(api: tuple[str, FakeServer]) -> None:
    name, _ = api
    result = run(name, "reason")
    assert result.text == "The code is 4819203."
    assert "1111111" in str(result.extra["reasoning"]) and "1111111" not in result.text


def test_empty_answer_from_exhausted_budget_is_length(api: tuple[str, FakeServer]) -> None:
    name, _ = api
    result = run(name, "cutoff")
    assert result.text == "" and result.finish_reason == "length"


def test_openai_inline_think_stripped_and_bad_request_permanent(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeServer(openai_route) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        result = run("openai", "think")
        assert result.text == "The code is 4819203." and "2222222" in str(result.extra["reasoning"])
        with pytest.raises(PermanentError, match="HTTP 400.*maximum context length"):
            run("openai", "bad")


def test_openai_reasoning_model_request_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeServer(openai_route) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        run("openai", "o4-mini?reasoning_effort=low&thinking=200", max_tokens=40)
        path, _, body = server.requests[-1]
        assert path == "/v1/responses"  # a reasoning model: the Responses API
        assert body["max_output_tokens"] == 240 and body["reasoning"] == {"effort": "low"}
        assert "temperature" not in body and "max_tokens" not in body
        run("openai", "o4-mini?reasoning_effort=low&thinking=200&api=chat", max_tokens=40)
        path, _, body = server.requests[-1]
        assert path == "/v1/chat/completions"
        assert body["max_completion_tokens"] == 240 and body["reasoning_effort"] == "low"
        assert "temperature" not in body and "max_tokens" not in body


def test_anthropic_thinking_budget_request(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    with FakeServer(anthropic_route) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        run("anthropic", "reason?thinking=2048", max_tokens=40)
        body = server.requests[-1][2]
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert body["max_tokens"] == 2088 and "temperature" not in body


def test_gemini_thinking_budget_request(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("google.genai")
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    with FakeServer(gemini_route) as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        run("gemini", "reason?thinking=512", max_tokens=40)
        config = server.requests[-1][2]["generationConfig"]
        thinking = config["thinkingConfig"]  # the REST API takes either spelling
        assert thinking in ({"thinkingBudget": 512, "includeThoughts": True},
                            {"thinking_budget": 512, "include_thoughts": True})
        assert config["maxOutputTokens"] == 552


@pytest.mark.parametrize("spec,var", [("openai:gpt-4o", "OPENAI_API_KEY"), ("anthropic:claude-x", "ANTHROPIC_API_KEY"),
                                      ("gemini:gemini-2.5-flash", "GEMINI_API_KEY or GOOGLE_API_KEY")])
def test_missing_key_is_one_line_naming_the_variable(spec: str, var: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip({"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}[spec.split(":")[0]])
    for v in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(CtxprobeError) as info:
        resolve_provider(spec, None)  # type: ignore[arg-type]
    assert var in str(info.value) and "\n" not in str(info.value)


def test_answer_prefix_joins_the_user_turn_for_hosted_apis(api: tuple[str, FakeServer]) -> None:
    """No hosted API takes a prefill the way RULER needs: the answer prefix is appended to
    the user turn, as RULER's own API clients send input + prefix as one prompt."""
    name, server = api
    prefixed = [*MESSAGES, {"role": "assistant", "content": " Answer:"}]

    async def go() -> None:
        provider = resolve_provider(f"{name}:ok", None)  # type: ignore[arg-type]
        try:
            await provider.generate(GenerateRequest(messages=prefixed, max_tokens=8))
        finally:
            await provider.aclose()

    asyncio.run(go())
    body = server.requests[-1][2]
    if name == "gemini":
        turns = [(c["role"], c["parts"][0]["text"]) for c in body["contents"]]
    else:
        turns = [(m["role"], m["content"]) for m in body["messages"] if m["role"] != "system"]
    assert turns == [("user", "What is the code? Answer:")]


@pytest.mark.parametrize(("typed", "sdk"), [("openai/ft:gpt-4o-mini:acme::x1?reasoning_effort=low", "openai"),
                                            ("anthropic:claude-sonnet-4-5?thinking=2048&cache_ttl=1h", "anthropic"),
                                            ("google/gemini-2.5-flash?thinking=0", "google.genai")])
def test_sdk_providers_are_made_from_the_parsed_reference(monkeypatch: pytest.MonkeyPatch, typed: str,
                                                          sdk: str) -> None:
    """One shared base (models/sdk_provider.py): the model name and options are the ones
    parse_model found, not parsed again from a string."""
    from ctxprobe.models.sdk_provider import SDKProvider
    from ctxprobe.spec.names import parse_model

    pytest.importorskip(sdk)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, SECRET)
    ref = parse_model(typed)
    provider = resolve_provider(ref.spec, None)  # type: ignore[arg-type]
    assert isinstance(provider, SDKProvider) and not hasattr(type(provider), "from_spec")
    assert (provider.model, provider.name) == (ref.name, ref.spec)
    assert {k: str(getattr(provider.options, k)).lower() for k in ref.options} == \
        {k: v.lower() for k, v in ref.options.items()}
    assert SECRET not in repr(provider)


def test_a_reference_without_a_model_name_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxprobe.providers.openai.api import OpenAIProvider
    from ctxprobe.spec.names import ModelRef

    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with pytest.raises(CtxprobeError, match=r"^bad model spec 'openai:': expected openai:MODEL, e\.g\. openai:gpt-4o-mini$"):
        OpenAIProvider.from_ref(ModelRef("openai", "", raw="openai:"))
