"""What an OpenAI-compatible server is asked before a sweep and how its answers are read,
against loopback fakes that answer as vLLM's and llama.cpp's sources do
(``fake_served_apis.py``, each shape cited there):

- vLLM started without ``--reasoning-parser`` refuses ``thinking_token_budget`` with HTTP
  400 (``vllm/v1/engine/input_processor.py``, ``InputProcessor._validate_params``): the
  request is sent again without it, the field is not sent again, and the run says which
  controls reached the model.
- llama.cpp's served window is ``/props`` ``default_generation_settings.n_ctx`` (one slot's
  share of ``-c``; ``tools/server/server-context.cpp``, ``get_props``), else the smallest
  ``/slots[].n_ctx``; ``/v1/models`` ``meta.n_ctx_train`` is only the trained window.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest, GenerateResult
from ctxprobe.providers.openai_compat.api import OpenAICompatProvider
from ctxprobe.spec import Spec
from ctxprobe.sweep.preflight import run_preflight
from ctxprobe.sweep.run import check_lengths
from ctxprobe.tokenizers import resolve_tokenizer

from fake_llm_apis import FakeServer
from fake_served_apis import VLLM_NO_REASONING_CONFIG, llamacpp_route, vllm_route

MESSAGES = [{"role": "user", "content": "What is the code?"}]


def generate(provider: OpenAICompatProvider, *budgets: int | None) -> list[GenerateResult]:
    async def go() -> list[GenerateResult]:
        try:
            return [await provider.generate(GenerateRequest(MESSAGES, max_tokens=16, reasoning_budget=b))
                    for b in budgets]
        finally:
            await provider.aclose()

    return asyncio.run(go())


# -- vLLM's thinking budget ------------------------------------------------------------------

def test_vllm_without_a_reasoning_parser_gets_the_budget_without_its_field() -> None:
    seen: list[dict[str, Any]] = []
    with FakeServer(vllm_route(parser=False, seen=seen)) as server:  # type: ignore[arg-type]
        provider = OpenAICompatProvider("qwen3", server.url + "/v1", api_key="")
        first, second, zero = generate(provider, 1024, 2048, 0)
    # before: the 400 was a PermanentError and every case with a budget failed
    assert first.text == second.text == "The code is 4819203."
    assert ["thinking_token_budget" in b for b in seen] == [True, False, False, False]  # refused once, then never sent
    assert [b["max_tokens"] for b in seen] == [16 + 1024, 16 + 1024, 16 + 2048, 16]  # the cap still holds
    assert all(b["chat_template_kwargs"]["enable_thinking"] is (b["max_tokens"] > 16) for b in seen)
    assert first.extra["reasoning_controls"] == "max_tokens, chat_template_kwargs.enable_thinking"
    assert "--reasoning-parser" in str(first.extra["reasoning_note"]) and "reasoning_note" not in zero.extra
    assert provider.takes_budget_field is False


def test_vllm_with_a_reasoning_parser_keeps_the_field() -> None:
    seen: list[dict[str, Any]] = []
    with FakeServer(vllm_route(parser=True, seen=seen)) as server:  # type: ignore[arg-type]
        provider = OpenAICompatProvider("qwen3", server.url + "/v1", api_key="")
        (result,) = generate(provider, 1024)
    assert [b["thinking_token_budget"] for b in seen] == [1024]
    assert result.extra["reasoning_controls"] == "max_tokens, chat_template_kwargs.enable_thinking, thinking_token_budget"
    assert "reasoning_note" not in result.extra and provider.takes_budget_field is True


def test_another_400_is_not_taken_for_the_budget_refusal() -> None:
    def route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
        return 400, {"error": {"message": "maximum context length is 8192 tokens", "type": "BadRequestError",
                               "param": None, "code": 400}}, {}

    with FakeServer(route) as server:
        provider = OpenAICompatProvider("qwen3", server.url + "/v1", api_key="")
        with pytest.raises(Exception, match="HTTP 400.*maximum context length"):
            generate(provider, 1024)
        assert len(server.requests) == 1 and provider.takes_budget_field is None


def test_preflight_names_the_controls_that_reach_the_model() -> None:
    assert VLLM_NO_REASONING_CONFIG.startswith("thinking_token_budget is set but reasoning_config is not configured")
    tok = resolve_tokenizer("approx")
    for parser, controls in ((False, "max_tokens, chat_template_kwargs.enable_thinking"),
                             (True, "max_tokens, chat_template_kwargs.enable_thinking, thinking_token_budget")):
        with FakeServer(vllm_route(parser=parser)) as server:  # type: ignore[arg-type]
            model = f"openai-compat:qwen3@{server.url}/v1"
            spec = Spec(model=model, lengths=[512], reasoning_budgets=[0, 256, 1024],
                        decoding={"temperature": 0.5})
            provider = OpenAICompatProvider("qwen3", server.url + "/v1", api_key="")
            report = asyncio.run(run_preflight(provider, tok, spec))
            asyncio.run(provider.aclose())
        assert report is not None and report.endpoint["reasoning_controls"] == controls
        said = [w for w in report.warnings if "thinking_token_budget" in w]
        assert len(said) == (0 if parser else 1) and all("--reasoning-parser" in w for w in said)
        budgets = [b.get("thinking_token_budget") for _, _, b in server.requests if "messages" in b]
        assert budgets == ([None, 256, None] if not parser else [None, 256])  # the smallest budget above 0


# -- llama.cpp's served window ---------------------------------------------------------------

def llamacpp(ctx: int, slots: int, trained: int = 8192) -> tuple[FakeServer, OpenAICompatProvider]:
    server = FakeServer(llamacpp_route(ctx=ctx, slots=slots, trained=trained))  # type: ignore[arg-type]
    server.__enter__()
    return server, OpenAICompatProvider("model.gguf", server.url + "/v1", api_key="")


def preflight(provider: OpenAICompatProvider) -> None:
    async def go() -> None:
        try:
            await provider.preflight()
        finally:
            await provider.aclose()

    asyncio.run(go())


@pytest.mark.parametrize(("ctx", "slots", "served"), [(4096, 1, 4096), (16384, 4, 4096), (32768, 2, 16384)])
def test_the_served_window_is_one_slots_share_of_the_servers_context(ctx: int, slots: int, served: int) -> None:
    server, provider = llamacpp(ctx, slots)
    try:
        preflight(provider)
    finally:
        server.__exit__()
    # before: meta.n_ctx_train (8192) was taken for the served window
    assert provider.context_window == served and provider.trained_context == 8192
    assert provider.slots == slots


def test_slots_alone_give_the_window_when_props_says_none() -> None:
    route = llamacpp_route(ctx=6144, slots=3)

    def no_props(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
        return (404, {"error": {"code": 404, "message": "Not Found", "type": "not_found_error"}}, {}) \
            if path == "/props" else route(method, path, headers, body)

    with FakeServer(no_props) as server:
        provider = OpenAICompatProvider("model.gguf", server.url + "/v1", api_key="")
        preflight(provider)
    assert provider.context_window == 2048 and provider.slots == 3


def test_a_case_longer_than_the_servers_window_is_refused_before_sending() -> None:
    server, provider = llamacpp(2048, 1)
    try:
        preflight(provider)
        spec = Spec(model=f"openai-compat:model.gguf@{server.url}/v1", lengths=[4096], tokenizer="approx")
        families = _families(spec)
        with pytest.raises(CtxprobeError, match="exceeds .*'s window of 2,048 tokens"):
            check_lengths(spec, provider, families)
        assert not [p for p, _, _ in server.requests if "completions" in p]  # nothing was sent
    finally:
        server.__exit__()


def test_a_served_window_beyond_the_trained_one_is_named() -> None:
    server, provider = llamacpp(16384, 1, trained=8192)
    try:
        tok = resolve_tokenizer("approx")
        spec = Spec(model=f"openai-compat:model.gguf@{server.url}/v1", lengths=[512], tokenizer="approx")
        report = asyncio.run(run_preflight(provider, tok, spec))
        asyncio.run(provider.aclose())
    finally:
        server.__exit__()
    # before: the trained window stood in for the served one, so this could never fire
    assert report is not None and report.unscaled_extension
    assert any("16,384 tokens exceeds the model's trained window of 8,192" in w for w in report.warnings)


def _families(spec: Spec) -> dict[str, Any]:
    from ctxprobe.cases.families import BuildContext, build_families

    return build_families(spec, BuildContext(tokenizer=resolve_tokenizer("approx"), haystack=spec.haystack,
                                             layout=spec.layout))

