"""Where genai-prices gives no window, the run reads the one the model's endpoint states.

Fields read, as the SDKs declare them: google-genai's ``types.Model.input_token_limit``
(``models.get``), anthropic's ``types.ModelInfo.max_input_tokens`` (``models.retrieve``,
anthropic 2.16). The fakes' answers are validated with those models below; the fake's
model ``tiny`` states 500 tokens."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.spec.schema import make_spec
from ctxprobe.sweep.run import run_sweep

from fake_llm_apis import FakeServer, anthropic_route, gemini_route

SETUP = {"gemini": (gemini_route, "GEMINI_API_KEY", "GEMINI_BASE_URL", "google.genai"),
         "anthropic": (anthropic_route, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "anthropic")}


def _serve(name: str, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    route, key, url_var, module = SETUP[name]
    pytest.importorskip(module)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv(key, "sk-contract-test-000000000000")
    server = FakeServer(route)  # type: ignore[arg-type]
    server.__enter__()
    monkeypatch.setenv(url_var, server.url)
    return server


@pytest.mark.parametrize("name, model, window", [("gemini", "gemini-2.5-pro", 1_048_576), ("gemini", "tiny", 500),
                                                 ("anthropic", "claude-opus-4-7", 1_000_000),
                                                 ("anthropic", "tiny", 500)])
def test_the_endpoint_states_the_window(name: str, model: str, window: int, monkeypatch: pytest.MonkeyPatch) -> None:
    server = _serve(name, monkeypatch)
    try:
        provider: Any = resolve_provider(f"{name}:{model}", None)  # type: ignore[arg-type]

        async def go() -> int | None:
            try:
                return await provider.advertised_window()  # type: ignore[no-any-return]
            finally:
                await provider.aclose()

        assert asyncio.run(go()) == window
    finally:
        server.__exit__(None, None, None)
    (path, status, payload) = server.responses[-1]
    assert status == 200
    if name == "gemini":
        from google.genai import types

        assert types.Model.model_validate(payload).input_token_limit == window
    else:
        from anthropic.types import ModelInfo

        assert ModelInfo.model_validate(payload).max_input_tokens == window


@pytest.mark.parametrize("name", ["gemini", "anthropic"])
def test_a_run_past_the_stated_window_is_refused_before_anything_is_sent(name: str, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    server = _serve(name, monkeypatch)
    try:
        spec = make_spec({"model": f"{name}:tiny", "lengths": "1k", "depths": [0.5], "reps": 1})
        with pytest.raises(CtxprobeError, match="window of 500 tokens"):
            run_sweep(spec, tmp_path / "s.sqlite", progress=False)
    finally:
        server.__exit__(None, None, None)
    sent = [p for p, _, _ in server.requests if "generateContent" in p or p == "/v1/messages"]
    assert sent == []  # nothing but the window was asked
