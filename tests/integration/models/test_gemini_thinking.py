"""Which reasoning budgets a Gemini model is sent, per Google's thinking guide
(https://ai.google.dev/gemini-api/docs/thinking): budgets above 0 go to thinking models
within each model's range, 0 is refused where thinking cannot be turned off, a model that
does not think takes 0 only and gets it as a plain request."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, Provider
from ctxprobe.spec import Spec
from ctxprobe.sweep.run import check_reasoning_budgets

from fake_llm_apis import FakeServer, gemini_route

pytest.importorskip("google.genai")


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-gemini-thinking-0000")
    with FakeServer(gemini_route) as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        yield server


def provider(model: str) -> Provider:
    return resolve_provider(f"gemini:{model}", None)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-3-pro-preview",
                                   "gemini-2.5-flash-lite", "my-tuned-gemini"])
def test_a_positive_budget_reaches_a_thinking_model(api: FakeServer, model: str) -> None:
    # before: every Gemini model was refused every budget above 0 ("cannot reason")
    assert provider(model).reasoning_refusal(1024) is None


@pytest.mark.parametrize(("model", "why"), [("gemini-2.5-pro", "Gemini 2.5 Pro cannot turn thinking off"),
                                            ("gemini-3-pro-preview", "Gemini 3 Pro cannot turn thinking off"),
                                            ("gemini-3-flash-preview", "'minimal', may still think")])
def test_budget_zero_is_refused_where_thinking_cannot_be_turned_off(api: FakeServer, model: str, why: str) -> None:
    said = provider(model).reasoning_refusal(0)
    assert said is not None and why in said and "\n" not in said


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.0-flash"])
def test_budget_zero_is_taken_where_thinking_turns_off(api: FakeServer, model: str) -> None:
    assert provider(model).reasoning_refusal(0) is None


@pytest.mark.parametrize(("model", "low", "high"), [("gemini-2.5-pro", 128, 32_768),
                                                    ("gemini-2.5-flash", 1, 24_576),
                                                    ("gemini-2.5-flash-lite", 512, 24_576)])
def test_each_models_budget_range_is_held_at_its_edges(api: FakeServer, model: str, low: int, high: int) -> None:
    p = provider(model)
    assert p.reasoning_refusal(low) is None and p.reasoning_refusal(high) is None
    for outside in (low - 1, high + 1):
        if outside == 0:
            continue
        said = p.reasoning_refusal(outside)
        assert said is not None and f"{low:,} to {high:,}" in said


def test_a_model_that_does_not_think_takes_zero_only_as_a_plain_request(api: FakeServer) -> None:
    p = provider("gemini-2.0-flash")
    assert "does not think" in (p.reasoning_refusal(1024) or "")

    async def go() -> None:
        try:
            await p.generate(GenerateRequest([{"role": "user", "content": "hi"}], max_tokens=8, reasoning_budget=0))
        finally:
            await p.aclose()

    asyncio.run(go())
    config: dict[str, Any] = api.requests[-1][2]["generationConfig"]
    assert "thinkingConfig" not in config and "thinking_config" not in config


def test_the_sweep_refuses_before_sending(api: FakeServer) -> None:
    spec = Spec(model="gemini:gemini-2.5-pro", lengths=[512], reasoning_budgets=[0, 1024])
    with pytest.raises(CtxprobeError, match="cannot turn thinking off"):
        check_reasoning_budgets(spec, provider("gemini-2.5-pro"))
    check_reasoning_budgets(Spec(model="gemini:gemini-2.5-pro", lengths=[512], reasoning_budgets=[128, 1024]),
                            provider("gemini-2.5-pro"))
    assert api.requests == []  # nothing was sent to decide it
