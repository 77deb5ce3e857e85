"""Claude's sampling fields on the wire, read back from a loopback fake of the Messages API
through the real ``anthropic`` SDK.

The anthropic SDK from 2.0 sends ``anthropic-version: 2026-10-21`` (``anthropic/_constants.py``),
under which ``temperature``, ``top_p`` and ``top_k`` are a 400 whatever their value
(Anthropic's migration guide for 2026-10-21; the SDK's ``MessageCreateParams`` no longer
names them). The fake rejects them under that header as the real API does, so a request
that carried one (ctxprobe used to put ``temperature`` in ``extra_body``) fails here.
With an SDK whose ``MessageCreateParams`` still names them (the lower bounds'), one of the
two is sent, never both (Claude Sonnet 4.5 and later answer 400 to both), to the models
that take them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.providers.anthropic.api import sampling, takes_sampling
from ctxprobe.models.base import GenerateRequest
from ctxprobe.providers.anthropic.rules import SAMPLING_NOTE, api_version, sampling_settable

from contract_checks import anthropic_params
from fake_llm_apis import NO_SAMPLING_VERSION, FakeServer, anthropic_route

pytest.importorskip("anthropic")
MESSAGES = [{"role": "user", "content": "What is the code?"}]
#: The installed SDK sends the version that takes no sampling (anthropic >= 2.0).
NEW_API = (api_version() or "") >= NO_SAMPLING_VERSION


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
    path, headers, body = server.requests[-1]
    anthropic_params(body)  # only what the installed SDK's MessageCreateParams names
    return body


def test_the_settable_rule_is_the_sdks_own_types() -> None:
    from anthropic.types.message_create_params import MessageCreateParamsBase

    named = {k for base in MessageCreateParamsBase.__mro__ for k in getattr(base, "__annotations__", {})}
    assert sampling_settable() is ("temperature" in named)
    assert sampling_settable() is not NEW_API  # 2026-10-21 and the types agree


def test_a_plain_run_of_a_model_that_sampled_sends_no_sampling_field(api: FakeServer) -> None:
    # before: anthropic/claude-opus-4-1 got temperature in extra_body, a 400 under 2026-10-21
    body = sent(api, "claude-opus-4-1", temperature=0.0)
    if NEW_API:
        assert not {"temperature", "top_p", "top_k"} & set(body)
        assert api.responses[-1][1] == 200  # the strict fake accepted it
    else:
        assert body["temperature"] == 0.0


@pytest.mark.skipif(not NEW_API, reason="the installed anthropic SDK still names temperature")
def test_the_fake_rejects_sampling_under_the_version_the_sdk_sends(api: FakeServer) -> None:
    import anthropic

    async def go() -> None:
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test-sampling-000000", base_url=api.url, max_retries=0)
        try:
            await client.messages.create(model="claude-opus-4-1", max_tokens=5, messages=MESSAGES,  # type: ignore[arg-type]
                                         extra_body={"temperature": 0.0})
        finally:
            await client.close()

    with pytest.raises(anthropic.BadRequestError, match="temperature"):
        asyncio.run(go())


@pytest.mark.skipif(not NEW_API, reason="the installed anthropic SDK still names temperature")
def test_a_decoding_needing_sampling_is_refused_in_one_line() -> None:
    import os

    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-test-sampling-000000")
    provider = resolve_provider("anthropic:claude-sonnet-4-5", None)  # type: ignore[arg-type]
    why = provider.sampling_refusal(0.7, None)
    assert why is not None and "\n" not in why and SAMPLING_NOTE in why and "2026-10-21" in why
    assert provider.decoding_note() is not None and SAMPLING_NOTE in provider.decoding_note()  # type: ignore[attr-defined]


@pytest.mark.skipif(NEW_API, reason="the installed anthropic SDK takes no sampling fields")
def test_with_an_sdk_that_names_them_one_of_the_two_is_sent(api: FakeServer) -> None:
    assert sent(api, "claude-sonnet-4-5", temperature=0.0, top_p=0.9) == {**sent(api, "claude-sonnet-4-5", top_p=0.9)}
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
    takes = takes and not NEW_API
    assert takes_sampling(model) is takes
    assert sampling(model, 0.0, None) == ({"temperature": 0.0} if takes else {})


def test_the_plan_says_decoding_is_the_providers_default() -> None:
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.sweep.plan_report import plan_report

    spec = make_spec({"model": "anthropic:claude-opus-4-1", "lengths": "1k", "depths": [0.5], "reps": 1})
    said = [w for w in plan_report(spec, ask_server=False).warnings if SAMPLING_NOTE in w]
    assert len(said) == (1 if NEW_API else 0)


def test_run_refuses_a_temperature_it_cannot_send(tmp_path: Any, api: FakeServer) -> None:
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.sweep.run import run_sweep

    if not NEW_API:
        pytest.skip("the installed anthropic SDK still names temperature")
    spec = make_spec({"model": "anthropic:claude-opus-4-1", "tokenizer": "approx", "lengths": "1k",
                      "depths": [0.5], "reps": 1, "decoding": {"temperature": 0.7}})
    with pytest.raises(CtxprobeError, match=f"^--temperature/--top-p: [^\\n]*{SAMPLING_NOTE}[^\\n]*$"):
        run_sweep(spec, tmp_path / "s.sqlite", progress=False)
    assert not [p for p, _, _ in api.requests if p == "/v1/messages"]  # nothing was sent
