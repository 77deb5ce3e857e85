"""Every body ctxprobe builds, for a matrix of current models, judged by the installed SDKs'
own request types with unknown keys refused (:mod:`contract_checks`, :mod:`sdk_contract`).

The matrix: every current chat model of OpenAI, Anthropic and Google that genai-prices lists
(not flagged deprecated there, not retired in ctxprobe's notes, not an image, audio,
realtime, embedding or legacy completion model), plus the ones the installed SDKs list that
genai-prices may not price yet: OpenAI's gpt-6 models (``ChatModel``), Claude 5 (``ModelParam``:
Opus, Sonnet, Haiku, Fable, Mythos) and Gemini 3.x. Each model's paths: a plain request, a
reasoning budget (0 where the model takes it, and the first budget above 0 it takes),
a cached prefix group's request, and a batch line (OpenAI's JSONL line and Anthropic's batch
request as built; Gemini's inlined request as the SDK puts it on the wire to a batch fake).
Live bodies are the ones the real SDKs put on the wire to loopback fakes; the Anthropic fake
rejects sampling fields under the ``anthropic-version`` the SDK sends. Run at the SDKs'
newest releases here and at pyproject's minimums by ``scripts/sdk-lower-bounds.sh``.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from ctxprobe.core.prefix import CacheHint, PrefixMark
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest

from contract_checks import anthropic_batch, check_request, check_response, openai_batch_line
from fake_llm_apis import FakeServer, anthropic_route, gemini_route, openai_route

CONTEXT = "The archive opens at dawn. " * 40 + "The special magic code is 4819203. " + "Rain fell. " * 40
MESSAGES = [{"role": "system", "content": "Answer with the code only."},
            {"role": "user", "content": CONTEXT + "What is the code?"}, {"role": "assistant", "content": "The code is"}]
HINT = CacheHint(key="niah-L4096-r0", marks=(PrefixMark(message=1, offset=len(CONTEXT) // 2, tokens=5000),), size=3)
#: Not chat models (or not current ones): what the matrix leaves out of genai-prices' lists.
NOT_CHAT = re.compile(r"image|tts|transcri|realtime|audio|search|embedding|moderation|^ft:|:extended|\.ft-|"
                      r"^(ada|babbage|curie|davinci)|text-|gpt-oss|computer-use|codex|gpt-live|whisper|translate|"
                      r"instruct|rosalind|cyber|chatgpt-|nano-banana|robotics|live|omni|gemma|^claude-(v1|2)|"
                      r"^gpt-3\.5|^gpt-4(-|$)|gpt-4\.5|^o1-(mini|preview)|^gemini-(1\.|pro|flash-1)")
PRICES_ID = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}
BUDGETS = (1024, 2048, 4096, 512, 128)


def _sdk_models(provider: str) -> list[str]:
    """What the installed SDK lists beyond genai-prices: gpt-6*, Claude 5, Gemini 3.x."""
    from ctxprobe.providers.openai.responses import _literals

    if provider == "openai":
        from openai.types.shared.chat_model import ChatModel

        return [m for m in _literals(ChatModel) if re.match(r"gpt-6", m)]
    if provider == "anthropic":
        from anthropic.types.model_param import ModelParam

        return [m for m in _literals(ModelParam) if re.match(r"claude-(opus|sonnet|haiku|fable|mythos)-5", m)]
    return ["gemini-3-flash-preview", "gemini-3.1-pro-preview", "gemini-3.5-flash"]


def matrix(provider: str) -> list[str]:
    from genai_prices import data_snapshot

    from ctxprobe.core.catalog import model_info
    from ctxprobe.prices.table import load_prices
    from ctxprobe.spec.names import parse_model

    table = load_prices(None)
    snapshot = data_snapshot.get_snapshot()
    (listed,) = [p for p in snapshot.providers if p.id == PRICES_ID[provider]]
    names = []
    for m in listed.models:
        if m.deprecated or NOT_CHAT.search(m.id) or (provider == "gemini") != m.id.startswith("gemini-"):
            continue
        info = model_info(parse_model(f"{provider}:{m.id}"), table)
        if info is None or not info.retired:
            names.append(m.id)
    return sorted(set(names) | set(_sdk_models(provider)))


def requests_for(provider: Any) -> list[GenerateRequest]:
    """Each path of one model: plain, its budgets, a cached group's request."""
    out = [GenerateRequest(messages=MESSAGES, max_tokens=64)]
    taken = [b for b in (0, *BUDGETS) if provider.reasoning_refusal(b) is None]
    for budget in ([0] if 0 in taken else []) + [b for b in taken if b][:1]:
        out.append(GenerateRequest(messages=MESSAGES, max_tokens=64, reasoning_budget=budget))
    out.append(GenerateRequest(messages=MESSAGES, max_tokens=64, cache=HINT))
    return out


SETUPS = {"openai": (openai_route, "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1", "openai"),
          "anthropic": (anthropic_route, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "", "anthropic"),
          "gemini": (gemini_route, "GEMINI_API_KEY", "GEMINI_BASE_URL", "", "google.genai")}


def test_the_matrix_holds_every_family_the_issue_names() -> None:
    for module in ("openai", "anthropic", "google.genai", "genai_prices"):
        pytest.importorskip(module)
    every = {p: matrix(p) for p in SETUPS}
    assert sum(len(v) for v in every.values()) >= 40
    assert {"gpt-6-sol", "gpt-5.5", "o3"} <= set(every["openai"])
    for family in ("opus", "sonnet", "haiku", "fable", "mythos"):
        assert any(m.startswith(f"claude-{family}-5") for m in every["anthropic"]), family
    assert any(m.startswith("gemini-3.") for m in every["gemini"])


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_every_body_for_every_model_passes_the_sdks_types(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    route, key, url_var, suffix, module = SETUPS[name]
    pytest.importorskip(module)
    pytest.importorskip("genai_prices")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv(key, "sk-contract-matrix-0000000000")
    models = matrix(name)
    sent = 0
    lines: list[tuple[str, Any]] = []
    with FakeServer(route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv(url_var, server.url + suffix)

        async def go() -> None:
            nonlocal sent
            for model in models:
                provider = resolve_provider(f"{name}:{model}", None)  # type: ignore[arg-type]
                try:
                    for i, request in enumerate(requests_for(provider)):
                        await provider.generate(request)
                        sent += 1
                        if name == "openai":  # the batch input line, as uploaded
                            lines.append((model, {"custom_id": f"{model}-{i}", "method": "POST",
                                                  "url": "/v1/responses" if provider.responses  # type: ignore[attr-defined]
                                                  else "/v1/chat/completions",
                                                  "body": provider.request_body(request)}))  # type: ignore[attr-defined]
                        elif name == "anthropic":  # the batch request, as created
                            lines.append((model, {"custom_id": f"r{i}", "params": provider.request_body(request)}))  # type: ignore[attr-defined]
                finally:
                    await provider.aclose()

        asyncio.run(go())
    failures = []
    for path, _, body in server.requests:
        try:
            assert check_request(path, body), path
        except AssertionError as exc:
            failures.append(f"{body.get('model', path)}: {exc}")
    for model, line in lines:
        try:
            (openai_batch_line if name == "openai" else lambda x: anthropic_batch({"requests": [x]}))(line)
        except AssertionError as exc:
            failures.append(f"{model} batch: {exc}")
    assert not failures, "\n".join(failures)
    assert len([p for p, _, _ in server.requests if "count" not in p]) >= sent >= 3 * len(models)
    statuses = [status for _, status, _ in server.responses]
    assert set(statuses) == {200}, statuses  # the strict fakes took every body
    for path, status, payload in server.responses:
        check_response(path, status, payload)


def test_every_gemini_batch_line_passes_the_sdks_types(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("google.genai")
    pytest.importorskip("genai_prices")
    import json

    from ctxprobe.models.batch import batch_api_for

    from fake_batch_apis import FAKES

    fake_cls, key, url_var = FAKES["gemini"]
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv(key, "sk-contract-matrix-0000000000")
    models = matrix("gemini")
    with fake_cls() as fake:
        monkeypatch.setenv(url_var, fake.url + fake.suffix)

        async def go() -> None:
            for model in models:
                provider = resolve_provider(f"gemini:{model}", None)  # type: ignore[arg-type]
                try:
                    api = batch_api_for(provider)
                    await api.submit([(f"r{i}", r) for i, r in enumerate(requests_for(provider))], tag=model)
                finally:
                    await provider.aclose()

        asyncio.run(go())
        checked = [check_request(path, json.loads(raw)) for method, path, raw in fake.bodies if method == "POST" and raw]
    assert checked.count("gemini batch") == len(models)
