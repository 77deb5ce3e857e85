"""Claude's sampling fields on the wire, read back from a loopback fake of the Messages API
through the real ``anthropic`` SDK.

Anthropic's rules (Messages API reference, ``temperature``/``top_p``; "What's new in Claude
Opus 4.7", https://platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-7):
Claude Sonnet 4.5 and later answer 400 "temperature and top_p cannot both be specified for
this model" when both are sent; Claude Opus 4.7 removed the sampling parameters (any value
is a 400). anthropic 1.0 removed ``temperature``/``top_p``/``top_k`` from ``messages.create``
(its MIGRATION.md, "Removed: deprecated request parameters": pass them through
``extra_body`` for models that still take them), so they must reach the JSON body whatever
the SDK's signature says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ctxprobe.models import resolve_provider
from ctxprobe.models.anthropic_api import sampling, takes_sampling
from ctxprobe.models.base import GenerateRequest

from fake_llm_apis import FakeServer, anthropic_route

pytest.importorskip("anthropic")
MESSAGES = [{"role": "user", "content": "What is the code?"}]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-sampling-000000")
    with FakeServer(anthropic_route) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def sent(server: FakeServer, model: str, **request: Any) -> dict[str, Any]:
    provider = resolve_provider(f"anthropic:{model}", None)  # type: ignore[arg-type]

    async def go() -> None:
        try:
            await provider.generate(GenerateRequest(MESSAGES, max_tokens=16, **request))
        finally:
            await provider.aclose()

    asyncio.run(go())
    return server.requests[-1][2]


def test_temperature_reaches_the_body_whatever_the_sdks_signature(api: FakeServer) -> None:
    # before: with anthropic >= 1.0 (no temperature in create) nothing was sent, so greedy
    # decoding silently became the API's default temperature 1.0
    body = sent(api, "claude-sonnet-4-5", temperature=0.0)
    assert body["temperature"] == 0.0 and "top_p" not in body


def test_top_p_goes_alone_when_the_temperature_is_the_default(api: FakeServer) -> None:
    # before: both were sent, and Claude Sonnet 4.5 and later answer 400 to that
    body = sent(api, "claude-sonnet-4-5", temperature=0.0, top_p=0.9)
    assert body["top_p"] == 0.9 and "temperature" not in body


def test_a_temperature_set_with_top_p_wins_and_top_p_is_not_sent(api: FakeServer) -> None:
    body = sent(api, "claude-haiku-4-5", temperature=0.7, top_p=0.9)
    assert body["temperature"] == 0.7 and "top_p" not in body


@pytest.mark.parametrize("model", ["claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-5"])
def test_models_without_sampling_parameters_get_none(api: FakeServer, model: str) -> None:
    body = sent(api, model, temperature=0.0, top_p=0.9)
    assert "temperature" not in body and "top_p" not in body


def test_thinking_takes_the_default_sampling(api: FakeServer) -> None:
    body = sent(api, "claude-sonnet-4-5", temperature=0.0, top_p=0.9, reasoning_budget=1024)
    assert "temperature" not in body and "top_p" not in body and body["thinking"]["budget_tokens"] == 1024


@pytest.mark.parametrize(("model", "takes"), [
    ("claude-opus-4-6", True), ("claude-opus-4-7", False), ("claude-opus-4-20250514", True),
    ("claude-opus-4-1-20250805", True), ("claude-sonnet-4-6", True), ("claude-3-5-haiku-latest", True),
    ("claude-haiku-4-5-20251001", True), ("claude-opus-5", False), ("my-proxy-model", True)])
def test_which_models_sample(model: str, takes: bool) -> None:
    assert takes_sampling(model) is takes
    assert sampling(model, 0.0, None) == ({"temperature": 0.0} if takes else {})
