"""Claude's capabilities and lifecycle from Anthropic's Models API (``models.retrieve``,
anthropic 2.17's ``ModelInfo.capabilities``/``lifecycle``/``retires_at``), read once per run
and stored with it; budgets that mean what they say; thinking tokens read from
``usage.output_tokens_details.thinking_tokens``. Every run here goes through the real SDK to
a loopback fake (``fake_llm_apis.anthropic_route``) that states the capabilities the issue
reports per model and rejects sampling fields under the SDK's ``anthropic-version``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.store import Store, iter_records

from contract_checks import anthropic_params
from fake_llm_apis import FAKE_THINKING, FakeServer, anthropic_route

pytest.importorskip("anthropic")


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-models-api-000000")
    with FakeServer(anthropic_route) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def run(tmp_path: Path, model: str, **extra: Any) -> str:
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.sweep.run import run_sweep

    spec = make_spec({"model": f"anthropic:{model}", "tokenizer": "approx", "lengths": "1k", "depths": [0.5],
                      "reps": 1, **extra})
    return run_sweep(spec, tmp_path / "s.sqlite", progress=False).run_id


def messages(server: FakeServer) -> list[dict[str, Any]]:
    bodies = [body for path, _, body in server.requests if path == "/v1/messages"]
    for body in bodies:
        anthropic_params(body)
    return bodies


def test_budget_zero_on_claude_sonnet_5_5_is_sent_as_disabled(tmp_path: Path, api: FakeServer) -> None:
    # before: budget 0 left thinking out, and Claude 5 then thinks adaptively
    run_id = run(tmp_path, "claude-sonnet-5-5", reasoning_budgets=[0, 2048])
    thinking = sorted(str(b.get("thinking")) for b in messages(api))
    assert thinking == ["{'type': 'adaptive'}", "{'type': 'disabled'}"]
    retrieved = [p for p, _, _ in api.requests if p.startswith("/v1/models/")]
    assert len(retrieved) == 1  # read once per run
    meta = Store(tmp_path / "s.sqlite").get_run(run_id).meta  # type: ignore[union-attr]
    facts = meta.preflight.endpoint["model_facts"]  # type: ignore[union-attr]
    assert facts["thinking_off"] == "disabled" and facts["source"].startswith("Anthropic's Models API")


def test_a_model_that_cannot_stop_thinking_refuses_budget_zero_before_anything_is_sent(
        tmp_path: Path, api: FakeServer) -> None:
    with pytest.raises(CtxprobeError, match="^claude-fable-5 cannot turn thinking off [^\n]*$|"
                                            "^anthropic:claude-fable-5 cannot turn thinking off [^\n]*$"):
        run(tmp_path, "claude-fable-5", reasoning_budgets=[0, 2048])
    assert messages(api) == []


def test_plan_refuses_it_too_from_the_offline_table() -> None:
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.sweep.plan_report import plan_report

    spec = make_spec({"model": "anthropic:claude-fable-5", "lengths": "1k", "depths": [0.5], "reps": 1,
                      "reasoning_budgets": [0, 2048]})
    with pytest.raises(CtxprobeError, match="^claude-fable-5 cannot turn thinking off[^\n]*$"):
        plan_report(spec, ask_server=False)
    spec = make_spec({"model": "anthropic:claude-sonnet-5-5", "lengths": "1k", "depths": [0.5], "reps": 1,
                      "reasoning_budgets": [0, 2048]})
    said = [w for w in plan_report(spec, ask_server=False).warnings if "rules from" in w]
    assert len(said) == 1 and "budget 0 as thinking {type: disabled}" in said[0]


def test_a_retired_model_is_refused_in_one_line(tmp_path: Path, api: FakeServer) -> None:
    with pytest.raises(CtxprobeError, match="^anthropic:claude-opus-4-0 is retired [^\n]*2026-01-05[^\n]*$"):
        run(tmp_path, "claude-opus-4-0")
    assert messages(api) == []


def test_a_deprecated_model_is_warned_with_its_date_and_the_note_is_stored(tmp_path: Path, api: FakeServer) -> None:
    run_id = run(tmp_path, "claude-opus-4-1")
    meta = Store(tmp_path / "s.sqlite").get_run(run_id).meta  # type: ignore[union-attr]
    notes = meta.preflight.warnings  # type: ignore[union-attr]
    assert any("deprecated" in n and "retiring 2027-02-15" in n for n in notes), notes
    from ctxprobe.providers.anthropic.rules import SAMPLING_NOTE, sampling_settable

    if not sampling_settable():  # no sampling field under the SDK's version (the fake refuses them)
        for body in messages(api):
            assert not {"temperature", "top_p", "top_k"} & set(body)
        assert any(SAMPLING_NOTE in n for n in notes)
        assert meta.preflight.endpoint["sampling"] == "provider default; not settable"  # type: ignore[union-attr]


def test_effort_the_api_does_not_list_is_refused_after_reading_it(tmp_path: Path, api: FakeServer) -> None:
    # the table lets Opus 4.1 through with no effort at all; the API's word refuses it too
    with pytest.raises(CtxprobeError, match="effort"):
        run(tmp_path, "claude-opus-4-1?effort=high")
    assert messages(api) == []


def test_a_claude_5_reply_whose_thinking_used_the_cap_is_output_truncated_with_its_tokens(
        tmp_path: Path, api: FakeServer) -> None:
    # before: the thinking text is omitted by default, so 0 reasoning tokens were stored
    run_id = run(tmp_path, "claude-sonnet-5-5", reasoning_budgets=[64])
    (record,) = list(iter_records(run_id, tmp_path / "s.sqlite"))
    body, = messages(api)
    assert body["max_tokens"] < FAKE_THINKING  # the fake thinks past it
    assert record.outcome == "output_truncated"
    assert record.reasoning_tokens == body["max_tokens"]


def test_sonnet_4_6_takes_max_effort(api: FakeServer) -> None:
    # before: refused (the table said low|medium|high); Anthropic's effort page lists max for the 4.6 models
    from ctxprobe.models import resolve_provider

    provider = resolve_provider("anthropic:claude-sonnet-4-6?effort=max", None)  # type: ignore[arg-type]
    assert provider.options.effort == "max"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("model", "var"), [("anthropic/claude-opus-4-1", "ANTHROPIC_BASE_URL"),
                                            ("gemini/gemini-2.5-flash", "GEMINI_BASE_URL"),
                                            ("anthropic:claude-sonnet-4-5", "ANTHROPIC_BASE_URL")])
def test_base_url_is_never_silently_ignored(model: str, var: str) -> None:
    # before: --base-url with anthropic/ or gemini/ was dropped and the SDK's default host called
    from ctxprobe.spec.names import parse_model

    with pytest.raises(CtxprobeError, match=f"^--base-url is not read for [a-z]+/ models [^\n]*set {var}[^\n]*$"):
        parse_model(model, "http://127.0.0.1:9/v1")
    assert parse_model(model).base_url is None  # without the flag: as before
