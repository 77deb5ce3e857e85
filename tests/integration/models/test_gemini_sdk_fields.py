"""Gemini as google-genai 3.6.1 ships it: the prompt counted once across automatic
continuation (``initial_prompt_token_count``, not the hops' sum that
``merge_continuation_responses`` makes), every ``FinishReason`` mapped (``CONTINUATION`` an
output cut short, live or in a batch item), and ``thinking_level`` sent to Gemini 3. Real
SDK, loopback fake (``fake_llm_apis.gemini_route``), nothing patched."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, GenerateResult

from contract_checks import check_request, check_response
from fake_llm_apis import FakeServer, gemini_route

genai_types = pytest.importorskip("google.genai.types")
#: google-genai 3.x: FinishReason.CONTINUATION and automatic continuation; Model.thinking
CONTINUES = "CONTINUATION" in {r.value for r in genai_types.FinishReason}
STATES_THINKING = "thinking" in genai_types.Model.model_fields
MESSAGES = [{"role": "user", "content": "What is the code? It is 4819203."}]


def _send(monkeypatch: pytest.MonkeyPatch, cases: list[tuple[str, dict[str, Any]]]
          ) -> tuple[list[dict[str, Any]], list[GenerateResult]]:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-gemini-fields-0000")
    results: list[GenerateResult] = []
    with FakeServer(gemini_route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)

        async def go() -> None:
            for model, kw in cases:
                provider = resolve_provider(f"gemini:{model}", None)  # type: ignore[arg-type]
                try:
                    results.append(await provider.generate(GenerateRequest(messages=MESSAGES, max_tokens=64, **kw)))
                finally:
                    await provider.aclose()

        asyncio.run(go())
    for path, status, payload in server.responses:
        check_response(path, status, payload)
    bodies = []
    for path, _, body in server.requests:
        assert check_request(path, body) == "gemini generateContent"
        bodies.append(body)
    return bodies, results


@pytest.mark.skipif(not CONTINUES, reason="the installed google-genai has no automatic continuation")
def test_the_prompt_is_counted_once_across_continuation_hops(monkeypatch: pytest.MonkeyPatch) -> None:
    # before: prompt_token_count summed over the hops (80 for one prompt of 40)
    bodies, (result,) = _send(monkeypatch, [("hops", {})])
    assert len(bodies) == 2 and "continuationToken" in bodies[1]  # the SDK followed the token
    assert result.text == "The code is 4819203." and result.finish_reason == "stop"
    assert result.prompt_tokens == 40


def test_every_finish_reason_the_sdk_lists_is_mapped() -> None:
    from ctxprobe.providers.gemini.api import FINISH_REASONS

    assert {r.value for r in genai_types.FinishReason} <= set(FINISH_REASONS)
    assert FINISH_REASONS["CONTINUATION"] == "length"  # listed whatever the SDK: a batch item may carry it


@pytest.mark.skipif(not CONTINUES, reason="the installed google-genai has no FinishReason.CONTINUATION")
def test_a_batch_item_ending_in_continuation_is_a_cut_output(monkeypatch: pytest.MonkeyPatch) -> None:
    # before: stored as an unknown reason "continuation"
    from ctxprobe.providers.gemini.batch import GeminiBatch

    monkeypatch.setenv("GEMINI_API_KEY", "test-key-gemini-fields-0000")
    batch = GeminiBatch(resolve_provider("gemini:gemini-2.5-flash", None))  # type: ignore[arg-type]
    item = genai_types.InlinedResponse.model_validate({
        "metadata": {"key": "c1"},
        "response": {"candidates": [{"content": {"role": "model", "parts": [{"text": "The code"}]},
                                     "finishReason": "CONTINUATION", "continuationToken": "aG9wLTE="}],
                     "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 2}}})
    got = batch._item(0, item)
    assert got.result is not None and got.result.finish_reason == "length"


@pytest.mark.parametrize(("model", "budget", "level"), [
    ("gemini-3-flash-preview", 512, "MINIMAL"), ("gemini-3.1-pro-preview", 2048, "LOW"),
    ("gemini-3.5-flash", 8192, "MEDIUM"), ("gemini-3.8-flash", 32768, "HIGH")])
def test_gemini_3_is_sent_a_thinking_level(model: str, budget: int, level: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # before: thinking_budget only, never thinking_level
    (body,), _ = _send(monkeypatch, [(model, {"reasoning_budget": budget})])
    thinking = _plain(body["generationConfig"]["thinkingConfig"])  # the SDK writes these keys snake_case
    assert thinking == {"thinkinglevel": level, "includethoughts": True}
    assert body["generationConfig"]["maxOutputTokens"] == 64 + budget


def test_gemini_2_5_keeps_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    (body,), _ = _send(monkeypatch, [("gemini-2.5-flash", {"reasoning_budget": 2048})])
    assert _plain(body["generationConfig"]["thinkingConfig"]) == {"thinkingbudget": 2048, "includethoughts": True}


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    return {k.replace("_", "").lower(): v for k, v in d.items()}


@pytest.mark.skipif(not STATES_THINKING, reason="the installed google-genai's Model has no thinking field")
def test_models_get_is_read_once_and_its_thinking_false_refuses_a_budget(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxprobe.errors import CtxprobeError
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.store import Store
    from ctxprobe.sweep.run import run_sweep

    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-gemini-fields-0000")
    with FakeServer(gemini_route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        spec = make_spec({"model": "gemini:plain", "tokenizer": "approx", "lengths": "1k", "depths": [0.5],
                          "reps": 1, "reasoning_budgets": [0, 1024]})
        with pytest.raises(CtxprobeError, match="^gemini:plain does not think [^\n]*models.get[^\n]*$"):
            run_sweep(spec, tmp_path / "a.sqlite", progress=False)
        spec = make_spec({"model": "gemini:gemini-2.5-flash", "tokenizer": "approx", "lengths": "1k",
                          "depths": [0.5], "reps": 1})
        run_id = run_sweep(spec, tmp_path / "b.sqlite", progress=False).run_id
    gets = [p for p, _, _ in server.requests if ":" not in p.rsplit("/", 1)[-1]]
    assert len(gets) == 2  # one models.get a run
    meta = Store(tmp_path / "b.sqlite").get_run(run_id).meta  # type: ignore[union-attr]
    assert meta.preflight.endpoint["model_facts"]["thinking"] is True  # type: ignore[union-attr]
