"""OpenAI as openai 3.60 ships it: gpt-6 models over ``/v1/responses``, cache writes read
(``input_tokens_details.cache_write_tokens``, ``prompt_tokens_details.cache_write_tokens``)
and billed at genai-prices' cache-write price, every ``incomplete_details.reason`` mapped,
the effort levels each model takes on the chat path too, and batch input lines written
exactly as sized. Real SDK, loopback fake (``fake_llm_apis.openai_route``), nothing patched."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, GenerateResult

from contract_checks import check_request, check_response
from fake_llm_apis import FakeServer, openai_route

pytest.importorskip("openai")
MESSAGES = [{"role": "system", "content": "Answer with the code."},
            {"role": "user", "content": "The archive opens at dawn. " * 300 + "The code is 4819203. What is it?"}]


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
        assert check_response(path, status, payload)
    sent = [(path, body) for path, _, body in server.requests]
    for path, body in sent:
        assert check_request(path, body)
    return sent, results


def test_gpt_6_sol_goes_to_the_responses_api(monkeypatch: pytest.MonkeyPatch) -> None:
    # before: name prefixes (o1/o3/o4/gpt-5) missed it: chat completions with max_tokens and temperature
    from openai.types.shared.chat_model import ChatModel

    from ctxprobe.providers.openai.responses import _literals

    if "gpt-6-sol" in _literals(ChatModel):  # the SDK lists it for chat, yet it is a reasoning model
        from ctxprobe.providers.openai.responses import responses_only

        assert not responses_only("gpt-6-sol")
    (path, body), = _send(monkeypatch, [("gpt-6-sol", {})])[0]
    assert path == "/v1/responses"
    assert "temperature" not in body and body["max_output_tokens"] == 64


def test_budget_zero_on_gpt_6_is_effort_none(monkeypatch: pytest.MonkeyPatch) -> None:
    sent, _ = _send(monkeypatch, [("gpt-6-sol", {"reasoning_budget": 0}), ("gpt-6-luna", {"reasoning_budget": 2048})])
    assert [b["reasoning"] for _, b in sent] == [{"effort": "none"}, {"effort": "low"}]


def test_cache_writes_are_read_from_both_apis(monkeypatch: pytest.MonkeyPatch) -> None:
    sent, (responses, chat) = _send(monkeypatch, [("gpt-6-sol", {}), ("gpt-6-sol?api=chat", {})])
    assert [p for p, _ in sent] == ["/v1/responses", "/v1/chat/completions"]
    for result in (responses, chat):
        written = result.extra["cache_write_tokens"]
        assert isinstance(written, int) and 1024 <= written <= (result.prompt_tokens or 0)


def test_a_gpt_6_sol_runs_cache_writes_are_stored_and_billed_at_genai_prices_price(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from genai_prices import Usage, calc_price

    from ctxprobe.spec.schema import make_spec
    from ctxprobe.store import iter_records
    from ctxprobe.sweep.run import run_sweep

    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(openai_route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        spec = make_spec({"model": "openai:gpt-6-sol", "tokenizer": "approx", "lengths": "4k", "depths": [0.5],
                          "reps": 1})
        run_id = run_sweep(spec, tmp_path / "s.sqlite", progress=False).run_id
    assert {p for p, _, _ in server.requests} == {"/v1/responses"}
    (record,) = list(iter_records(run_id, tmp_path / "s.sqlite"))
    assert record.cache_write_tokens and record.cache_write_tokens >= 1024
    expected = calc_price(Usage(input_tokens=record.reported_prompt_tokens, cache_write_tokens=record.cache_write_tokens,
                                output_tokens=record.completion_tokens), "gpt-6-sol", provider_id="openai")
    plain = calc_price(Usage(input_tokens=record.reported_prompt_tokens, output_tokens=record.completion_tokens),
                       "gpt-6-sol", provider_id="openai")
    assert expected.total_price > plain.total_price  # the writes cost more than plain input
    assert record.cost_usd == pytest.approx(float(expected.total_price), rel=0.01)


@pytest.mark.parametrize("reason", ["max_output_tokens", "max_messages", "steered"])
def test_every_incomplete_reason_is_a_cut_output(reason: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: max_messages and steered fell through as unknown finish reasons
    if reason not in _incomplete_reasons():
        pytest.skip(f"the installed openai SDK's IncompleteDetails has no {reason}")
    _, (result,) = _send(monkeypatch, [(f"incomplete-{reason}?reasoning=true", {})])
    assert result.finish_reason == "length"
    assert result.extra["incomplete_reason"] == reason


def _incomplete_reasons() -> set[str]:
    import typing

    from openai.types.responses.response import IncompleteDetails

    return set(typing.get_args(typing.get_args(IncompleteDetails.model_fields["reason"].annotation)[0]))


def test_every_reason_the_sdk_lists_is_mapped() -> None:
    from ctxprobe.providers.openai.responses import INCOMPLETE

    assert _incomplete_reasons() and _incomplete_reasons() <= set(INCOMPLETE)


def test_a_pro_model_on_the_chat_path_is_sent_high_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # before: the chat path sent effort_for(budget) ("low" for 1,024), which a pro model refuses
    sent, _ = _send(monkeypatch, [("gpt-5.2-pro?api=chat", {"reasoning_budget": 1024}), ("gpt-5.2-pro?api=chat", {})])
    assert [p for p, _ in sent] == ["/v1/chat/completions"] * 2
    assert [b["reasoning_effort"] for _, b in sent] == ["high", "high"]


def test_batch_lines_are_written_as_they_were_sized(monkeypatch: pytest.MonkeyPatch) -> None:
    # before: sized on compact JSON, written with ", " and ": " separators (bigger than sized)
    from ctxprobe.models.batch import batch_api_for

    from fake_batch_apis import FAKES

    fake_cls, key, url_var = FAKES["openai"]
    monkeypatch.setenv(key, "sk-contract-batch-0000000000")
    with fake_cls() as fake:
        monkeypatch.setenv(url_var, fake.url + fake.suffix)
        provider = resolve_provider("openai:gpt-4o-mini", None)  # type: ignore[arg-type]
        api = batch_api_for(provider)
        requests = [(f"r{i}", GenerateRequest(messages=MESSAGES, max_tokens=16)) for i in range(3)]

        async def go() -> None:
            try:
                await api.submit(requests, tag="sizes")
            finally:
                await provider.aclose()

        asyncio.run(go())
        (data,) = [d for purpose, d in fake.files.values() if purpose == "batch"]  # type: ignore[attr-defined]
    lines = data.decode().splitlines(keepends=True)
    assert [len(line.encode()) for line in lines] == [api.request_bytes(cid, r) for cid, r in requests]
    assert [json.loads(line)["custom_id"] for line in lines] == ["r0", "r1", "r2"]


def test_the_sdks_shutdown_dates_refuse_and_warn() -> None:
    # the openai SDK's own deprecation note under ChatModel: a past shutdown date is a retired model
    from ctxprobe.providers.openai.responses import sdk_facts, sdk_shutdowns

    dates = sdk_shutdowns()
    if not dates:
        pytest.skip("the installed openai SDK writes no deprecation note")
    name, date = sorted(dates.items(), key=lambda kv: kv[1])[0]
    facts, retired, warning = sdk_facts(name, date)  # on its shutdown day
    assert retired is not None and "\n" not in retired and date in retired and warning is None
    facts, retired, warning = sdk_facts(name, "2000-01-01")
    assert retired is None and warning is not None and date in warning and facts["shutdown"] == date


def test_a_run_stores_what_the_sdk_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.store import Store
    from ctxprobe.sweep.run import run_sweep

    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(openai_route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        spec = make_spec({"model": "openai:gpt-6-sol", "tokenizer": "approx", "lengths": "1k", "depths": [0.5],
                          "reps": 1})
        run_id = run_sweep(spec, tmp_path / "s.sqlite", progress=False).run_id
    meta = Store(tmp_path / "s.sqlite").get_run(run_id).meta  # type: ignore[union-attr]
    facts = meta.preflight.endpoint["model_facts"]  # type: ignore[union-attr]
    assert facts["api"] == "responses" and "ChatModel" in facts["source"]
