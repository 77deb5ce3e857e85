"""Reasoning split (inline tags) and provider option parsing: pure functions."""

from __future__ import annotations

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.providers.anthropic.api import parse_message
from ctxprobe.providers.gemini.api import parse_response
from ctxprobe.providers.openai.api import parse_chat_completion
from ctxprobe.models.options import parse_options, split_options
from ctxprobe.providers.openai.options import OpenAIOptions
from ctxprobe.models.reasoning import finalize, split_reasoning


@pytest.mark.parametrize("text,answer,reasoning", [
    ("plain 4819203", "plain 4819203", ""),
    ("<think>maybe 111</think>\nIt is 4819203.", "It is 4819203.", "maybe 111"),
    ("prompt opened the tag, 111?</think>It is 4819203.", "It is 4819203.", "prompt opened the tag, 111?"),
    ("<think>ran out of budget 111", "", "ran out of budget 111"),
    ("<thinking>a</thinking>X<think>b</think>Y", "XY", "a\nb"),
    ("", "", ""),
])
def test_split_reasoning(text: str, answer: str, reasoning: str) -> None:
    assert split_reasoning(text) == (answer, reasoning)


def test_budget_exhausted_inline_is_empty_length() -> None:
    result = finalize("<think>considering 1111111 and", "length")
    assert result.text == "" and result.finish_reason == "length"
    assert "1111111" in str(result.extra["reasoning"])


def test_recorded_json_parsers() -> None:
    openai = parse_chat_completion({"choices": [{"message": {"content": "A", "reasoning": "r"}, "finish_reason": "stop"}],
                                    "usage": {"prompt_tokens": 3, "completion_tokens": 1}})
    assert (openai.text, openai.extra["reasoning"], openai.prompt_tokens) == ("A", "r", 3)
    claude = parse_message({"content": [{"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": "B"}],
                            "stop_reason": "model_context_window_exceeded", "usage": {"input_tokens": 5, "output_tokens": 1}})
    assert (claude.text, claude.finish_reason, claude.extra["reasoning_redacted"]) == ("B", "length", True)
    blocked = parse_response({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 9}})
    assert (blocked.text, blocked.finish_reason, blocked.prompt_tokens) == ("", "content_filter", 9)


def test_options_from_spec_and_mapping() -> None:
    base, query = split_options("openai:gpt-4o-mini?reasoning_effort=low&thinking=256")
    assert base == "openai:gpt-4o-mini" and query == {"reasoning_effort": "low", "thinking": "256"}
    opts = parse_options(OpenAIOptions, base, query, {"thinking": 10, "timeout": 30})
    assert (opts.thinking, opts.timeout, opts.reasoning_effort) == (256, 30.0, "low")  # string wins


@pytest.mark.parametrize("query,fragment", [
    ({"reasoning_efort": "low"}, "unknown option 'reasoning_efort'"),
    ({"thinking": "-5"}, "option 'thinking'"),
    ({"reasoning_effort": "extreme"}, "option 'reasoning_effort'"),
])
def test_bad_options_are_one_line(query: dict[str, str], fragment: str) -> None:
    with pytest.raises(CtxprobeError) as info:
        parse_options(OpenAIOptions, "openai:x", query)
    assert fragment in str(info.value) and "accepted:" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(CtxprobeError, match="twice"):
        split_options("openai:x?thinking=1&thinking=2")


def test_missing_sdk_names_the_extra() -> None:
    from ctxprobe.errors import MissingExtraError
    from ctxprobe.models._sdk import import_sdk, redact

    with pytest.raises(MissingExtraError, match=r"pip install 'ctxprobe\[gemini\]'"):
        import_sdk("no_such_sdk_module_xyz", "google-genai", "gemini", "The model 'gemini:x'")
    key = "sk-proj-ABCDEFGH12345678wxyz"
    assert key[:8] not in redact(f"Incorrect API key provided: sk-proj-****5678wxyz ({key})", (key,))
