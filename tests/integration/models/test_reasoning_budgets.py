"""A reasoning budget per request, as each provider sends it: the exact request fields the
official SDKs (and the OpenAI-compatible client) put on the wire, read back from loopback
fakes of the providers' APIs, for every budget shape (none, 0, small, large)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, GenerateResult, Provider
from ctxprobe.providers.openai.api import EFFORT_CEILINGS, effort_for
from ctxprobe.providers.openai_compat.api import OpenAICompatProvider

from fake_llm_apis import FakeServer, anthropic_route, gemini_route, openai_route

KEY = "sk-test-reasoning-0000000000"
MESSAGES = [{"role": "user", "content": "What is the code?"}]
ANSWER = 32  # the answer's output limit in every request below


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.setenv(var, KEY)


@pytest.fixture
def openai_api(keys: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    pytest.importorskip("openai")
    with FakeServer(openai_route) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        yield server


@pytest.fixture
def anthropic_api(keys: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    pytest.importorskip("anthropic")
    with FakeServer(anthropic_route) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture
def gemini_api(keys: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    pytest.importorskip("google.genai")
    with FakeServer(gemini_route) as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        yield server


def send(provider: Provider, budget: int | None, server: FakeServer) -> tuple[dict[str, Any], GenerateResult]:
    async def go() -> GenerateResult:
        try:
            return await provider.generate(GenerateRequest(MESSAGES, max_tokens=ANSWER, reasoning_budget=budget))
        finally:
            await provider.aclose()

    result = asyncio.run(go())
    return server.requests[-1][2], result


def sent(model: str, budget: int | None, server: FakeServer) -> tuple[dict[str, Any], GenerateResult]:
    return send(resolve_provider(model, None), budget, server)  # type: ignore[arg-type]


# -- OpenAI ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "budget", "effort"), [
    ("gpt-5-mini", 0, "minimal"),  # gpt-5: its lowest effort
    ("gpt-5.1", 0, "none"),  # gpt-5.1 and later turn reasoning off
    ("o4-mini", 1, "low"),
    ("o4-mini", 2048, "low"),
    ("o4-mini", 2049, "medium"),
    ("gpt-5", 8192, "medium"),
    ("gpt-5", 8193, "high"),
    ("o3", 32768, "high"),
])
def test_openai_reasoning_model_gets_effort_and_a_hard_cap(openai_api: FakeServer, model: str, budget: int,
                                                           effort: str) -> None:
    # through the Responses API by default (ResponseCreateParams: reasoning.effort, max_output_tokens)
    body, result = sent(f"openai:{model}", budget, openai_api)
    assert body["reasoning"] == {"effort": effort}
    assert body["max_output_tokens"] == ANSWER + budget  # reasoning + answer, a hard cap
    assert "max_tokens" not in body and "temperature" not in body and "reasoning_effort" not in body
    assert result.extra["reasoning_tokens"] == 77
    # ?api=chat: chat completions, the same controls in its own fields
    body, result = sent(f"openai:{model}?api=chat", budget, openai_api)
    assert body["reasoning_effort"] == effort
    assert body["max_completion_tokens"] == ANSWER + budget
    assert "max_tokens" not in body and "temperature" not in body
    assert result.extra["reasoning_tokens"] == 77


def test_effort_ceilings_are_the_documented_mapping() -> None:
    assert EFFORT_CEILINGS == ((2048, "low"), (8192, "medium"))
    assert [effort_for("o4-mini", b) for b in (1024, 2048, 2049, 8192, 8193)] == ["low", "low", "medium", "medium",
                                                                                  "high"]


def test_openai_explicit_effort_wins_and_the_budget_still_caps(openai_api: FakeServer) -> None:
    body, _ = sent("openai:o4-mini?reasoning_effort=high", 1024, openai_api)
    assert body["reasoning"] == {"effort": "high"} and body["max_output_tokens"] == ANSWER + 1024
    body, _ = sent("openai:o4-mini?reasoning_effort=high&api=chat", 1024, openai_api)
    assert body["reasoning_effort"] == "high" and body["max_completion_tokens"] == ANSWER + 1024


def test_openai_plain_model_budget_zero_is_a_plain_request(openai_api: FakeServer) -> None:
    body, result = sent("openai:gpt-4o", 0, openai_api)
    assert body["max_tokens"] == ANSWER and body["temperature"] == 0
    assert "reasoning_effort" not in body and "max_completion_tokens" not in body
    assert "reasoning_tokens" not in result.extra


def test_openai_without_the_axis_sends_what_it_sent_before(openai_api: FakeServer) -> None:
    body, _ = sent("openai:o4-mini?api=chat", None, openai_api)
    assert body["max_completion_tokens"] == ANSWER and "reasoning_effort" not in body
    body, _ = sent("openai:o4-mini", None, openai_api)  # Responses: no effort said, the model's default
    assert body["max_output_tokens"] == ANSWER and "reasoning" not in body


def test_openai_refusals(keys: None) -> None:
    plain = resolve_provider("openai:gpt-4o", None)  # type: ignore[arg-type]
    assert plain.reasoning_refusal(0) is None
    why = plain.reasoning_refusal(1024)
    assert why is not None and "not a reasoning model" in why and "\n" not in why
    o_series = resolve_provider("openai:o3-mini", None)  # type: ignore[arg-type]
    assert "cannot turn reasoning off" in (o_series.reasoning_refusal(0) or "")
    assert o_series.reasoning_refusal(1) is None
    assert resolve_provider("openai:gpt-5", None).reasoning_refusal(0) is None  # type: ignore[arg-type]
    forced = resolve_provider("openai:my-proxy-model?reasoning=true", None)  # type: ignore[arg-type]
    assert forced.reasoning_refusal(4096) is None


# -- Anthropic -------------------------------------------------------------------------------

def test_anthropic_budget_zero_disables_thinking(anthropic_api: FakeServer) -> None:
    body, _ = sent("anthropic:claude-sonnet-4-5", 0, anthropic_api)
    assert body["thinking"] == {"type": "disabled"}
    assert body["max_tokens"] == ANSWER


@pytest.mark.parametrize("budget", [1024, 4096])
def test_anthropic_budget_enables_thinking_with_max_tokens_above_it(anthropic_api: FakeServer, budget: int) -> None:
    body, result = sent("anthropic:claude-sonnet-4-5", budget, anthropic_api)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == ANSWER + budget > budget  # the API requires max_tokens > budget_tokens
    assert "temperature" not in body and "top_p" not in body  # thinking takes the default sampling


def test_anthropic_without_the_axis_sends_no_thinking(anthropic_api: FakeServer) -> None:
    body, _ = sent("anthropic:claude-sonnet-4-5", None, anthropic_api)
    assert "thinking" not in body and body["max_tokens"] == ANSWER


def test_anthropic_refuses_budgets_below_its_minimum(keys: None) -> None:
    provider = resolve_provider("anthropic:claude-sonnet-4-5", None)  # type: ignore[arg-type]
    assert provider.reasoning_refusal(0) is None and provider.reasoning_refusal(1024) is None
    why = provider.reasoning_refusal(1023)
    assert why is not None and "1,024" in why and "\n" not in why


# -- Gemini ----------------------------------------------------------------------------------

@pytest.mark.parametrize("budget", [0, 1024])
def test_gemini_budget_is_thinking_budget(gemini_api: FakeServer, budget: int) -> None:
    body, result = sent("gemini:gemini-2.5-flash", budget, gemini_api)
    config = body["generationConfig"]
    thinking = _field(config, "thinking_config")
    # the SDK writes this nested config in either case style (Google's JSON parser reads both)
    assert _field(thinking, "thinking_budget") == budget
    assert bool(_field(thinking, "include_thoughts")) is (budget > 0)
    assert config["maxOutputTokens"] == ANSWER + budget  # thoughts count against it
    assert result.extra["reasoning_tokens"] == 12  # usageMetadata.thoughtsTokenCount


def test_gemini_without_the_axis_sends_no_thinking_config(gemini_api: FakeServer) -> None:
    body, _ = sent("gemini:gemini-2.5-flash", None, gemini_api)
    assert _field(body["generationConfig"], "thinking_config") is None


def _field(d: dict[str, Any], snake: str) -> Any:
    head, *rest = snake.split("_")
    return d.get(snake, d.get(head + "".join(w.capitalize() for w in rest)))


# -- OpenAI-compatible servers (vLLM, SGLang, llama.cpp) -----------------------------------

@pytest.mark.parametrize("budget", [0, 1024])
def test_compat_budget_fields(budget: int) -> None:
    with FakeServer(openai_route) as server:
        body, result = send(OpenAICompatProvider("qwen3", server.url + "/v1", api_key=""), budget, server)
    assert body["max_tokens"] == ANSWER + budget
    assert body["chat_template_kwargs"] == {"enable_thinking": budget > 0}
    if budget:
        assert body["thinking_token_budget"] == budget
        assert result.extra["reasoning_tokens"] == 77
    else:
        assert "thinking_token_budget" not in body


def test_compat_without_the_axis_sends_no_reasoning_fields() -> None:
    with FakeServer(openai_route) as server:
        body, _ = send(OpenAICompatProvider("qwen3", server.url + "/v1", api_key=""), None, server)
    assert body["max_tokens"] == ANSWER
    assert "chat_template_kwargs" not in body and "thinking_token_budget" not in body


def test_compat_inline_thinking_is_kept_apart_and_any_budget_is_sent() -> None:
    with FakeServer(openai_route) as server:
        provider = OpenAICompatProvider("think", server.url + "/v1", api_key="")
        assert provider.reasoning_refusal(4096) is None  # whether it reasons is the server's to say
        _, result = send(provider, 1024, server)
    assert result.text == "The code is 4819203."  # the value it considered while thinking is not its answer
    assert "2222222" in str(result.extra["reasoning"])
