"""OpenAI's reasoning models through the Responses API, checked on the wire.

Every request is judged by openai-python's own ``ResponseCreateParamsNonStreaming`` (the
installed SDK, tests/helpers/contract_checks.py) and every answer served by the fake is an
``openai.types.responses.Response`` (validated with it). Facts: pro models are listed in
openai-python's ``types/shared/responses_model.py`` (``o3-pro``, ``gpt-5-pro``…) and take
``reasoning.effort`` ``high`` only (issue 41's reading of OpenAI's model pages);
``ReasoningEffort`` (openai-python ``types/shared/reasoning_effort.py``) lists ``none``,
``minimal``, ``low``, ``medium``, ``high``, ``xhigh``, ``max``; an incomplete response
carries ``status: "incomplete"`` and ``incomplete_details.reason == "max_output_tokens"``
(``openai.types.responses.Response.IncompleteDetails``)."""

from __future__ import annotations

import asyncio
import typing
from typing import Any

import pytest

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.outcome import Outcome
from ctxprobe.core.prefix import CacheHint, PrefixMark
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, GenerateResult
from ctxprobe.providers.openai.responses import ORDER, efforts_for, parse_response

from contract_checks import check_request, check_response
from fake_llm_apis import FakeServer, openai_route, responses_reply

pytest.importorskip("openai")

MESSAGES = [{"role": "system", "content": "Answer with the code only."},
            {"role": "user", "content": "The special magic code is 4819203. What is the code?"}]
HINT = CacheHint(key="niah-L4096-r0", marks=(PrefixMark(message=1, offset=10, tokens=2000),), size=3)


def _send(monkeypatch: pytest.MonkeyPatch, cases: list[tuple[str, dict[str, Any]]]
          ) -> tuple[list[tuple[str, dict[str, Any]]], list[GenerateResult]]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-test-000000000000")
    results: list[GenerateResult] = []
    with FakeServer(openai_route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")

        async def go() -> None:
            for model, kw in cases:
                provider = resolve_provider(f"openai:{model}", None)  # type: ignore[arg-type]
                try:
                    results.append(await provider.generate(GenerateRequest(messages=MESSAGES, max_tokens=64, **kw)))
                finally:
                    await provider.aclose()

        asyncio.run(go())
    for path, status, payload in server.responses:
        assert check_response(path, status, payload)  # every answer is an SDK type
    sent = [(path, body) for path, _, body in server.requests]
    for path, body in sent:
        assert check_request(path, body) in ("openai response", "openai chat completion")
    return sent, results


def test_gpt_5_pro_is_sent_through_responses_with_effort_high(monkeypatch: pytest.MonkeyPatch) -> None:
    sent, (result,) = _send(monkeypatch, [("gpt-5-pro", {"reasoning_budget": 2048})])
    ((path, body),) = sent
    assert path == "/v1/responses"
    assert body["reasoning"] == {"effort": "high"}  # the budget's own effort would be "low": pro takes high only
    assert body["max_output_tokens"] == 64 + 2048 and "temperature" not in body and "max_tokens" not in body
    assert body["input"][0] == {"role": "system", "content": "Answer with the code only."}
    assert result.text == "The code is 4819203." and result.extra["reasoning_tokens"] == 77
    assert "distractor" in str(result.extra["reasoning"])  # the reasoning summary, kept apart


@pytest.mark.parametrize("model", ["gpt-5-pro", "gpt-5.2-pro", "gpt-5.4-pro", "o3-pro"])
def test_pro_models_take_high_only(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-test-000000000000")
    assert efforts_for(model)[0] == ("high",)
    for effort in ("minimal", "low", "medium", "xhigh"):
        with pytest.raises(CtxprobeError, match=f"^bad model spec [^\\n]*takes reasoning effort high, not {effort}"):
            resolve_provider(f"openai:{model}?reasoning_effort={effort}", None)  # type: ignore[arg-type]
    provider = resolve_provider(f"openai:{model}", None)  # type: ignore[arg-type]
    assert provider.responses  # type: ignore[attr-defined]
    assert provider.reasoning_refusal(0) is not None  # it cannot stop reasoning
    assert provider.request_body(GenerateRequest(MESSAGES, max_tokens=8))["reasoning"] == {"effort": "high"}  # type: ignore[attr-defined]


def test_every_effort_value_ctxprobe_takes_is_the_sdks_and_max_is_not_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from openai.types.shared.reasoning_effort import ReasoningEffort

    from ctxprobe.providers.openai.options import OpenAIOptions

    sdk = {a for arg in typing.get_args(ReasoningEffort) for a in typing.get_args(arg)}
    ours = set(typing.get_args(typing.get_args(OpenAIOptions.model_fields["reasoning_effort"].annotation)[0]))
    assert ours == sdk == set(ORDER)
    sent, _ = _send(monkeypatch, [("gpt-5.5?reasoning_effort=max", {}), ("gpt-5.2?reasoning_effort=xhigh", {}),
                                  ("gpt-5.1", {"reasoning_budget": 0}), ("gpt-5", {"reasoning_budget": 0})])
    assert [b["reasoning"]["effort"] for _, b in sent] == ["max", "xhigh", "none", "minimal"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-test-000000000000")
    with pytest.raises(CtxprobeError, match="gpt-5 takes reasoning effort minimal\\|low\\|medium\\|high, not none"):
        resolve_provider("openai:gpt-5?reasoning_effort=none", None)  # type: ignore[arg-type]


def test_usage_cache_key_and_chat_for_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    sent, results = _send(monkeypatch, [("o4-mini", {"cache": HINT}), ("gpt-4.1", {"cache": HINT}),
                                        ("o4-mini?api=chat", {"reasoning_budget": 1024})])
    (p1, b1), (p2, b2), (p3, b3) = sent
    assert p1 == "/v1/responses" and b1["prompt_cache_key"] == "niah-L4096-r0" and b1["store"] is False
    assert results[0].extra["cached_prompt_tokens"] == 1024  # input_tokens_details.cached_tokens
    assert results[0].prompt_tokens == 21 and results[0].completion_tokens == 5  # no effort sent: the default
    assert p2 == "/v1/chat/completions" and b2["prompt_cache_key"] == "niah-L4096-r0"  # not a reasoning model
    assert p3 == "/v1/chat/completions" and b3["max_completion_tokens"] == 64 + 1024


def test_an_incomplete_response_is_output_truncated(monkeypatch: pytest.MonkeyPatch) -> None:
    from openai.types.responses import Response

    from ctxprobe.scores.outcome import score_response

    _, (cut,) = _send(monkeypatch, [("cutoff?reasoning=true", {"reasoning_budget": 4096})])
    assert cut.finish_reason == "length" and cut.text == ""
    served = responses_reply("o3", "", status="incomplete", reason="max_output_tokens", reasoning_tokens=64)
    assert Response.model_validate(served).incomplete_details.reason == "max_output_tokens"  # type: ignore[union-attr]
    family: Any = None  # a reply cut while thinking is labelled before any family scores it
    case = Case(Cell("niah", 1024, 0.5), 0, 0, MESSAGES, ["4819203"], token_count=30)
    _, scored = score_response(family, case, text=cut.text, finish_reason=cut.finish_reason,
                               reported_prompt_tokens=None, thought=True)
    assert scored.outcome == Outcome.OUTPUT_TRUNCATED
    # a complete answer is a stop; another incomplete reason is not called a cut at the cap
    assert parse_response(responses_reply("o3", "The code is 4819203.")).finish_reason == "stop"
    filtered = parse_response(responses_reply("o3", "", status="incomplete", reason="content_filter"))
    assert filtered.finish_reason == "content_filter"


def test_batch_goes_through_the_responses_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from contract_checks import openai_batch_line
    from fake_batch_apis import FAKES
    from ctxprobe.models.batch import batch_api_for

    fake_cls, key, url_var = FAKES["openai"]
    monkeypatch.setenv(key, "sk-contract-batch-0000000000")
    with fake_cls() as fake:
        monkeypatch.setenv(url_var, fake.url + fake.suffix)
        provider = resolve_provider("openai:gpt-5-pro", None)  # type: ignore[arg-type]

        async def go() -> GenerateResult | None:
            try:
                api = batch_api_for(provider)
                batch_id, _ = await api.submit([("r0", GenerateRequest(MESSAGES, max_tokens=64))], tag="responses")
                while not (await api.poll(batch_id)).ended:
                    pass
                (item,) = await api.results(batch_id)
                return item.result
            finally:
                await provider.aclose()

        result = asyncio.run(go())
        (batch,) = fake.batches.values()  # type: ignore[attr-defined]
        assert batch["endpoint"] == "/v1/responses"
        lines = [json.loads(x) for purpose, data in fake.files.values() if purpose == "batch"  # type: ignore[attr-defined]
                 for x in data.decode().splitlines() if x.strip()]
    (line,) = lines
    openai_batch_line(line)  # the envelope, and the body as ResponseCreateParamsNonStreaming
    assert line["url"] == "/v1/responses" and line["body"]["reasoning"] == {"effort": "high"}
    assert result is not None and result.text


def _sdk_literals(alias: object) -> set[str]:
    import typing

    out: set[str] = set()
    for arg in typing.get_args(alias):
        out |= {arg} if isinstance(arg, str) else _sdk_literals(arg)
    return out


def test_api_chat_is_refused_exactly_for_the_models_the_sdk_lists_for_responses_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """openai-python's ``ResponsesModel`` (types/shared/responses_model.py) is ``ChatModel``
    plus the names served through the Responses API alone; ``?api=chat`` is refused for those
    and only those (gpt-5.2-pro, which the SDK also lists as a ChatModel, is not refused)."""
    from openai.types.shared.chat_model import ChatModel
    from openai.types.shared.responses_model import ResponsesModel

    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-test-000000000000")
    chat = _sdk_literals(ChatModel)
    only = sorted(_sdk_literals(ResponsesModel) - chat)
    assert "gpt-5-pro" in only and "o3-pro" in only
    for model in only:
        with pytest.raises(CtxprobeError, match="Responses API only"):
            resolve_provider(f"openai:{model}?api=chat", None)  # type: ignore[arg-type]
    for model in sorted(m for m in chat if m.endswith("-pro")) + ["gpt-5", "o4-mini"]:
        provider = resolve_provider(f"openai:{model}?api=chat", None)  # type: ignore[arg-type]
        assert not provider.responses  # type: ignore[attr-defined]
