"""Claude by family: thinking shapes, sampling fields and effort levels, checked on the wire.

Types read from the installed anthropic SDK (2.16): ``ThinkingConfigAdaptiveParam``
(``{"type": "adaptive"}``), ``ThinkingConfigEnabledParam`` (``budget_tokens``),
``MessageCreateParams``; ``MODELS_TO_WARN_WITH_THINKING_ENABLED`` (anthropic/_data) warns
that ``enabled`` is deprecated on claude-opus-4-6. That Opus 4.7 and later, Mythos and
Fable answer 400 to ``enabled``/``disabled`` and to ``temperature``: "What's new in Claude
Opus 4.7" as quoted by docs.qcode.cc/en/docs/usage/adaptive-thinking ("claude-opus-4-7:
Only way to enable ... budget_tokens: 400 error") and the issue's reports for the others.
Every body here is sent to a real HTTP server on 127.0.0.1 and judged by the SDK's types."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.providers.anthropic.rules import NEWEST, claude_rules

from contract_checks import anthropic_params
from fake_llm_apis import FakeServer, anthropic_route
from sdk_contract import check_typed_dict

pytest.importorskip("anthropic")

MESSAGES = [{"role": "user", "content": "What is the code? It is 4819203."}]


def _send(monkeypatch: pytest.MonkeyPatch, cases: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(anthropic_route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)

        async def go() -> None:
            for model, kw in cases:
                provider = resolve_provider(f"anthropic:{model}", None)  # type: ignore[arg-type]
                try:
                    await provider.generate(GenerateRequest(messages=MESSAGES, max_tokens=64, **kw))
                finally:
                    await provider.aclose()

        asyncio.run(go())
    return [body for path, _, body in server.requests if path == "/v1/messages"]


@pytest.mark.parametrize("model", ["claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-sonnet-5-5",
                                   "claude-haiku-5-5", "claude-fable-5", "claude-fable-5-2", "claude-mythos-5-2",
                                   "claude-mythos-preview", "claude-quill-1"])
def test_a_budget_sweep_on_an_adaptive_only_model_sends_only_adaptive(model: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from anthropic.types.thinking_config_adaptive_param import ThinkingConfigAdaptiveParam

    assert claude_rules(model).adaptive_only
    bodies = _send(monkeypatch, [(model, {"reasoning_budget": b, "temperature": 0.0}) for b in (0, 1024, 8192)])
    assert len(bodies) == 3
    for body, budget in zip(bodies, (0, 1024, 8192)):
        anthropic_params(body)  # MessageCreateParams, every field
        assert "temperature" not in body and "top_p" not in body
        assert body["max_tokens"] == 64 + budget
        if budget:
            check_typed_dict(ThinkingConfigAdaptiveParam, body["thinking"])
            assert body["thinking"] == {"type": "adaptive"}
        elif claude_rules(model).off == "disabled":  # Claude 5 Opus/Sonnet/Haiku: 0 is said as disabled
            assert body["thinking"] == {"type": "disabled"}, body
        else:
            assert "thinking" not in body  # "disabled" is a 400 there: 0 leaves thinking out (or is refused)


def test_older_models_keep_enabled_and_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    from anthropic.types.thinking_config_disabled_param import ThinkingConfigDisabledParam
    from anthropic.types.thinking_config_enabled_param import ThinkingConfigEnabledParam

    bodies = _send(monkeypatch, [("claude-sonnet-4-5", {"reasoning_budget": 2048}),
                                 ("claude-sonnet-4-5", {"reasoning_budget": 0}),
                                 ("claude-opus-4-6", {"reasoning_budget": 2048}),
                                 ("claude-sonnet-4-6?adaptive=true", {}),
                                 ("claude-opus-4-6?adaptive=true&effort=max", {"reasoning_budget": 4096})])
    for body in bodies:
        anthropic_params(body)
    check_typed_dict(ThinkingConfigEnabledParam, bodies[0]["thinking"])
    assert bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    check_typed_dict(ThinkingConfigDisabledParam, bodies[1]["thinking"])
    assert bodies[1]["thinking"] == {"type": "disabled"}
    assert "temperature" not in bodies[1]  # anthropic-version 2026-10-21: no sampling field at all
    assert bodies[2]["thinking"]["type"] == "enabled"  # still taken on 4.6 (the SDK warns it is deprecated)
    assert bodies[3]["thinking"] == {"type": "adaptive"} and "temperature" not in bodies[3]
    assert bodies[4]["thinking"] == {"type": "adaptive"} and bodies[4]["output_config"] == {"effort": "max"}
    assert bodies[4]["max_tokens"] == 64 + 4096


@pytest.mark.parametrize("model, takes", [("claude-sonnet-4-5", True), ("claude-sonnet-4-6", True),
                                          ("claude-opus-4-6", True), ("claude-haiku-4-5-20251001", True),
                                          ("claude-opus-4-7", False), ("claude-fable-5", False),
                                          ("claude-mythos-5-2", False), ("claude-sonnet-4-7", False),
                                          ("claude-newname-1", False)])
def test_sampling_by_family_a_new_name_is_not_the_oldest(model: str, takes: bool) -> None:
    from ctxprobe.providers.anthropic.api import sampling, takes_sampling
    from ctxprobe.providers.anthropic.rules import sampling_settable

    assert claude_rules(model).sampling is takes  # the family's rule
    assert takes_sampling(model) is (takes and sampling_settable())  # and the API version's
    assert ("temperature" in sampling(model, 0.0, None)) is (takes and sampling_settable())
    if model.startswith("claude-newname"):
        assert claude_rules(model) is NEWEST


@pytest.mark.parametrize("model, why", [
    ("claude-sonnet-4-6?effort=xhigh", "takes effort low|medium|high|max, not xhigh"),
    ("claude-sonnet-4-5?effort=low", "takes effort \\(none\\), not low"),
    ("claude-haiku-4-5?effort=high", "takes effort \\(none\\), not high"),
    ("claude-opus-4-5?effort=max", "takes effort low|medium|high, not max"),
    ("claude-sonnet-4-5?adaptive=true", "takes no adaptive thinking"),
])
def test_options_a_model_does_not_take_are_refused_in_one_line_by_plan_and_run(model: str, why: str) -> None:
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.sweep.plan_report import plan_report

    with pytest.raises(CtxprobeError, match=f"^bad model spec [^\\n]*{why}[^\\n]*$"):
        resolve_provider(f"anthropic:{model}", None)  # type: ignore[arg-type]
    with pytest.raises(CtxprobeError, match=why):
        plan_report(make_spec({"model": f"anthropic:{model}", "lengths": "1k", "depths": [0.5], "reps": 1}))


def test_plan_says_how_the_budget_axis_is_sent_to_an_adaptive_only_model() -> None:
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.sweep.plan_report import plan_report

    spec = make_spec({"model": "anthropic:claude-opus-4-7", "lengths": "1k", "depths": [0.5], "reps": 1,
                      "reasoning_budgets": [0, 4096]})
    (note,) = [w for w in plan_report(spec).warnings if "takes adaptive thinking only" in w]
    assert "max_tokens = answer budget + N" in note and "0 leaves thinking out" in note
    spec = make_spec({"model": "anthropic:claude-sonnet-4-5", "lengths": "1k", "depths": [0.5], "reps": 1,
                      "reasoning_budgets": [0, 4096]})
    assert not [w for w in plan_report(spec).warnings if "adaptive thinking only" in w]


def test_the_run_and_its_report_say_how_the_budget_axis_was_sent(tmp_path: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxprobe.report.load import load_report
    from ctxprobe.spec.schema import make_spec
    from ctxprobe.sweep.run import run_sweep

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(anthropic_route) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        spec = make_spec({"model": "anthropic:claude-opus-4-7", "tokenizer": "approx", "lengths": "1k",
                          "depths": [0.5], "reps": 1, "reasoning_budgets": [0, 2048]})
        result = run_sweep(spec, tmp_path / "s.sqlite", progress=False)
    bodies = [body for path, _, body in server.requests if path == "/v1/messages"]
    assert {str(b.get("thinking")) for b in bodies} == {"None", "{'type': 'adaptive'}"}
    for body in bodies:
        anthropic_params(body)
    report = load_report(result.run_id, tmp_path / "s.sqlite")
    assert any("takes adaptive thinking only" in n for n in report.notes)
