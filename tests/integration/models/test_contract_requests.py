"""Every request body ctxprobe builds, live and batch, for every provider, with caching,
reasoning budgets, sampling settings and output limits, validated against the official
SDKs' own request types (:mod:`contract_checks`: openai's ``CompletionCreateParams``,
anthropic's ``MessageCreateParams`` and batch ``Request``, google-genai's
``GenerateContentConfig``/``Content``), strictly: an undeclared field, a missing required
one, a wrong type or a value outside a ``Literal`` fails. The bodies are the ones the real
SDKs put on the wire to loopback fakes (nothing is patched); every answer the fakes gave is
validated with the SDKs' response models too (the fakes' shapes follow the providers'
published examples, cited in ``fake_llm_apis.py``).

Run at the SDKs' newest releases here and at the minimums pyproject.toml declares by
``scripts/sdk-lower-bounds.sh``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from ctxprobe.core.prefix import CacheHint, PrefixMark
from ctxprobe.core.variant import sample_nonce
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.providers.openai_compat.api import OpenAICompatProvider

from contract_checks import check_request, check_response
from fake_batch_apis import FAKES, BatchFake
from fake_llm_apis import FakeServer, anthropic_route, gemini_route, openai_route
from fake_served_apis import vllm_route
from sdk_contract import ContractError

SYSTEM = "Answer with the code only."
CONTEXT = "The archive opens at dawn. " * 40 + "The special magic code is 4819203. " + "Rain fell. " * 40
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": CONTEXT + "What is the code?"},
            {"role": "assistant", "content": "The code is"}]  # an answer prefix: folded into the user turn
#: A prefix group's hint: one mark in the user turn, past every provider's caching minimum.
HINT = CacheHint(key="niah-L4096-r0", marks=(PrefixMark(message=1, offset=len(CONTEXT) // 2, tokens=5000),),
                 size=3)

OPENAI = [("gpt-4o-mini", {}), ("gpt-4o-mini", {"temperature": 0.3, "top_p": 0.9, "seed": 7}),
          ("gpt-4o", {"reasoning_budget": 0}), ("o4-mini", {}), ("o4-mini", {"reasoning_budget": 1024}),
          ("gpt-5", {"reasoning_budget": 0}), ("gpt-5.1", {"reasoning_budget": 0}),
          ("gpt-5.2?reasoning_effort=xhigh", {"reasoning_budget": 16384}), ("gpt-4o-mini", {"cache": HINT}),
          ("gpt-4o-mini", {"max_tokens": 1}),
          ("gpt-4o-mini", {"temperature": 0.7, "seed": sample_nonce(None, 4)}),  # a decoding variant's sample
          # through the Responses API (reasoning models; pro models there only, effort high)
          ("gpt-5-pro", {"reasoning_budget": 4096}), ("o3-pro", {}), ("gpt-5.4-pro", {"cache": HINT}),
          ("gpt-5.5?reasoning_effort=max", {}), ("gpt-5.2", {"reasoning_budget": 0}),
          ("o4-mini?api=chat", {"reasoning_budget": 1024})]
ANTHROPIC = [("claude-sonnet-4-5", {}), ("claude-sonnet-4-5", {"top_p": 0.9}),
             ("claude-haiku-4-5", {"temperature": 0.7, "top_p": 0.9, "seed": 3}),
             ("claude-sonnet-4-5", {"reasoning_budget": 0}), ("claude-sonnet-4-5", {"reasoning_budget": 4096}),
             ("claude-sonnet-4-5", {"cache": HINT}), ("claude-sonnet-4-5?cache_ttl=1h", {"cache": HINT}),
             ("claude-opus-4-5?effort=high", {"reasoning_budget": 1024}), ("claude-opus-4-7", {"top_p": 0.5})]
GEMINI = [("gemini-2.5-flash", {}), ("gemini-2.5-flash", {"temperature": 0.4, "top_p": 0.9, "seed": 11}),
          ("gemini-2.5-flash", {"reasoning_budget": 0}), ("gemini-2.5-flash", {"reasoning_budget": 1024}),
          ("gemini-2.5-pro", {"reasoning_budget": 128}), ("gemini-2.0-flash", {"reasoning_budget": 0}),
          ("gemini-2.5-flash", {"cache": HINT}), ("gemini-2.5-flash?thinking=512", {}),
          ("gemini-2.5-flash", {"temperature": 0.7, "seed": sample_nonce(None, 4)})]
SETUPS = {"openai": (openai_route, "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1", "openai", OPENAI),
          "anthropic": (anthropic_route, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "", "anthropic", ANTHROPIC),
          "gemini": (gemini_route, "GEMINI_API_KEY", "GEMINI_BASE_URL", "", "google.genai", GEMINI)}


def request(**kw: Any) -> GenerateRequest:
    return GenerateRequest(messages=MESSAGES, max_tokens=kw.pop("max_tokens", 64), **kw)


@pytest.fixture(params=sorted(SETUPS))
def live(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, FakeServer]]:
    route, key, url_var, suffix, module, _ = SETUPS[request.param]
    pytest.importorskip(module)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv(key, "sk-contract-test-000000000000")
    with FakeServer(route) as server:
        monkeypatch.setenv(url_var, server.url + suffix)
        yield request.param, server


def test_every_live_request_and_answer_passes_the_sdks_types(live: tuple[str, FakeServer]) -> None:
    name, server = live

    async def go() -> None:
        for model, kw in SETUPS[name][5]:
            provider = resolve_provider(f"{name}:{model}", None)  # type: ignore[arg-type]
            try:
                await provider.generate(request(**kw))
                if hasattr(provider, "count_tokens"):
                    await provider.count_tokens(MESSAGES)  # type: ignore[attr-defined]
            finally:
                await provider.aclose()

    asyncio.run(go())
    checked = [check_request(path, body) for path, _, body in server.requests]
    assert all(checked), [p for (p, _, _), c in zip(server.requests, checked) if not c]  # every request known
    assert len([c for c in checked if "count" not in c]) == len(SETUPS[name][5])
    answered = [check_response(path, status, body) for path, status, body in server.responses]
    assert len([a for a in answered if a]) == len(SETUPS[name][5])


@pytest.mark.parametrize("parser", [False, True])
def test_every_served_request_passes_openais_type_plus_the_servers_fields(parser: bool) -> None:
    with FakeServer(vllm_route(parser=parser)) as server:  # type: ignore[arg-type]
        provider = OpenAICompatProvider("qwen3", server.url + "/v1", api_key="")

        async def go() -> None:
            try:
                for kw in ({}, {"reasoning_budget": 0}, {"reasoning_budget": 1024, "top_p": 0.8, "seed": 5},
                           {"slot": 1}):
                    await provider.generate(request(**kw))
            finally:
                await provider.aclose()

        asyncio.run(go())
    bodies = [(p, b) for p, _, b in server.requests if p.endswith("/chat/completions")]
    assert len(bodies) == 4 + (0 if parser else 1)  # the refused budget is sent again without its field
    for path, body in bodies:
        assert check_request(path, body, server_fields=True)
    for path, status, body in server.responses:
        check_response(path, status, body)


# -- batch -------------------------------------------------------------------------------------

@pytest.fixture(params=sorted(FAKES))
def batch_fake(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, BatchFake]]:
    name = request.param
    fake_cls, key, url_var = FAKES[name]
    pytest.importorskip({"gemini": "google.genai"}.get(name, name))
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv(key, "sk-contract-batch-0000000000")
    with fake_cls() as fake:
        monkeypatch.setenv(url_var, fake.url + fake.suffix)
        yield name, fake


def test_every_batch_request_passes_the_sdks_types(batch_fake: tuple[str, BatchFake]) -> None:
    from ctxprobe.models.batch import batch_api_for

    name, fake = batch_fake
    cases = SETUPS[name][5]

    async def go() -> None:
        for i, (model, kw) in enumerate(cases):
            provider = resolve_provider(f"{name}:{model}", None)  # type: ignore[arg-type]
            api = batch_api_for(provider)
            try:
                batch_id, _ = await api.submit([(f"r{i}", request(**kw))], tag=f"contract-{i}")
                while not (await api.poll(batch_id)).ended:  # the fake moves on at every poll
                    pass
                (item,) = await api.results(batch_id)
                assert item.custom_id == f"r{i}" and item.result is not None, item
            finally:
                await provider.aclose()

    asyncio.run(go())
    answers = batch_answers(name, fake)
    assert len(answers) == len(cases)
    for answer in answers:
        check_batch_answer(name, answer)
    checked: list[str] = []
    for method, path, raw in fake.bodies:
        if name == "openai" and path == "/v1/files":
            continue  # the JSONL rides in the upload: read back from the fake's file store below
        if method == "POST" and raw:
            checked.append(check_request(path, json.loads(raw)))
    if name == "openai":
        from contract_checks import openai_batch_line

        lines = [json.loads(x) for purpose, data in fake.files.values() if purpose == "batch"  # type: ignore[attr-defined]
                 for x in data.decode().splitlines() if x.strip()]
        for line in lines:
            openai_batch_line(line)
        assert len(lines) == len(cases)
    else:
        assert checked.count(f"{name} batch") == len(cases), checked


def batch_answers(name: str, fake: BatchFake) -> list[dict[str, Any]]:
    """Every per-request answer the fake's ended batches hold, as served."""
    if name == "openai":
        return [json.loads(x) for purpose, data in fake.files.values() if purpose == "batch_output"  # type: ignore[attr-defined]
                for x in data.decode().splitlines() if x.strip()]
    key = "results" if name == "anthropic" else "responses"
    return [r for b in fake.batches.values() for r in b.get(key) or []]


def check_batch_answer(name: str, answer: dict[str, Any]) -> None:
    """An answer line by the SDK's own type: OpenAI's output line body a ``ChatCompletion``
    (https://platform.openai.com/docs/api-reference/batch/request-output), Anthropic's a
    ``MessageBatchIndividualResponse``, Gemini's an ``InlinedResponse``."""
    if name == "openai":  # a Response for the lines sent to /v1/responses
        from openai.types.chat import ChatCompletion
        from openai.types.responses import Response

        assert set(answer) == {"id", "custom_id", "response", "error"}
        body = answer["response"]["body"]
        (Response if body.get("object") == "response" else ChatCompletion).model_validate(body)
    elif name == "anthropic":
        from anthropic.types.messages import MessageBatchIndividualResponse

        MessageBatchIndividualResponse.model_validate(answer)
    else:
        from google.genai import types

        from sdk_contract import check_genai

        check_genai(types.InlinedResponse, answer)


# -- the check itself is strict -------------------------------------------------------------

def test_the_check_refuses_what_the_sdks_types_do_not_declare() -> None:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    pytest.importorskip("google.genai")
    good = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}
    check_request("/v1/chat/completions", good)
    for bad in ({**good, "extra_body": {"prompt_cache_key": "k"}},  # the old batch body of SDKs < 1.98
                {**good, "reasoning_effort": "maximal"}, {**good, "max_tokens": "5"},
                {"model": "gpt-4o", "max_tokens": 5},
                {**good, "messages": [{"role": "user", "content": "hi", "cache_control": {"type": "ephemeral"}}]}):
        with pytest.raises(ContractError):
            check_request("/v1/chat/completions", bad)
    claude = {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    check_request("/v1/messages", claude)
    for bad in ({**claude, "thinking": {"type": "enabled"}},  # budget_tokens is required
                {**claude, "messages": [{"role": "user", "content": [{"type": "text", "text": "x",
                                                                      "cache_control": {"type": "persistent"}}]}]},
                {**claude, "top_k_tokens": 3}):
        with pytest.raises(ContractError):
            check_request("/v1/messages", bad)
    gem = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 5}}
    check_request("/v1beta/models/gemini-2.5-flash:generateContent", gem)
    for bad in ({**gem, "generationConfig": {"maxOutputTokens": 5, "thinkingBudget": 0}},  # belongs in thinkingConfig
                {**gem, "temperature": 0.2}):
        with pytest.raises(ContractError):
            check_request("/v1beta/models/gemini-2.5-flash:generateContent", bad)


# -- the 1M window's beta header, live and in a batch ---------------------------------------

#: The 1M-window beta of Claude Sonnet 4 / 4.5 (``context-1m-2025-08-07``) was retired on
#: 2026-04-30: genai-prices 0.2.3's note on claude-sonnet-4-5 ("The 1M context beta was
#: retired on 2026-04-30; requests over 200k now error", citing
#: platform.claude.com/docs/en/release-notes/overview). ctxprobe refuses ``?context_1m`` in
#: one line before anything is sent, and no call carries the header.
BETA_1M = "context-1m-2025-08-07"


def test_the_retired_1m_beta_is_refused_before_anything_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    from ctxprobe.errors import CtxprobeError

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(anthropic_route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        with pytest.raises(CtxprobeError, match="^bad model spec [^\n]*context_1m[^\n]*retired on 2026-04-30[^\n]*$"):
            resolve_provider("anthropic:claude-sonnet-4-5?context_1m=true", None)  # type: ignore[arg-type]
        provider = resolve_provider("anthropic:claude-sonnet-4-5", None)  # type: ignore[arg-type]

        async def go() -> None:
            try:
                await provider.generate(request())
            finally:
                await provider.aclose()

        asyncio.run(go())
    (headers,) = [h for p, h, _ in server.requests if p == "/v1/messages"]
    assert headers.get("anthropic-beta") != BETA_1M
