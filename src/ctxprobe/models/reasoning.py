"""Reasoning text kept apart from the answer, and budget exhaustion reported as such.

Reasoning models return their thinking either in a separate API field (OpenAI-compatible
``reasoning_content``/``reasoning``, Anthropic ``thinking`` blocks, Gemini ``thought``
parts) or inline as ``<think>…</think>`` in the text (DeepSeek-R1, Qwen3 and most open
models served raw). Scoring must see only the answer: a needle value mentioned while
thinking is not an answer, and a distractor considered and rejected is not a distractor
answer. The reasoning is returned in ``GenerateResult.extra["reasoning"]``.

An empty answer because the output budget ran out mid-thought must read as truncation
(``finish_reason="length"`` → ``output_truncated``), never as the model answering nothing.
"""

from __future__ import annotations

import re

from ctxprobe.models.base import GenerateResult

_TAGS = ("think", "thinking", "reasoning")
_OPEN = re.compile(r"<(" + "|".join(_TAGS) + r")>", re.IGNORECASE)


def split_reasoning(text: str) -> tuple[str, str]:
    """Inline reasoning → (answer, reasoning). Handles the three shapes seen in practice:

    - ``<think>…</think> answer`` (possibly several blocks);
    - ``… </think> answer`` with no opening tag: the template put ``<think>`` in the
      prompt (Qwen3, DeepSeek-R1), so everything before the first close is reasoning;
    - ``<think>…`` never closed: the budget ran out while thinking; no answer at all.
    """
    if not text:
        return "", ""
    reasoning: list[str] = []
    answer = text
    first_open = _OPEN.search(answer)
    close_any = re.search(r"</(" + "|".join(_TAGS) + r")>", answer, re.IGNORECASE)
    if close_any and (first_open is None or close_any.start() < first_open.start()):
        reasoning.append(answer[: close_any.start()])
        answer = answer[close_any.end() :]
    while (m := _OPEN.search(answer)) is not None:
        tag = m.group(1)
        close = re.search(rf"</{tag}>", answer[m.end() :], re.IGNORECASE)
        if close is None:  # unterminated: the rest is reasoning, cut off by the budget
            reasoning.append(answer[m.end() :])
            answer = answer[: m.start()]
            break
        reasoning.append(answer[m.end() : m.end() + close.start()])
        answer = answer[: m.start()] + answer[m.end() + close.end() :]
    if not reasoning:
        return text, ""
    return answer.strip(), "\n".join(r.strip() for r in reasoning if r.strip())


def finalize(
    text: str,
    finish_reason: str | None,
    *,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    api_reasoning: str | None = None,
    extra: dict[str, object] | None = None,
) -> GenerateResult:
    """One GenerateResult with reasoning split off (API field and inline tags merged)."""
    answer, inline = split_reasoning(text or "")
    parts = [p for p in ((api_reasoning or "").strip(), inline) if p]
    out_extra: dict[str, object] = dict(extra or {})
    if parts:
        out_extra["reasoning"] = "\n".join(parts)
    return GenerateResult(
        text=answer,
        finish_reason=finish_reason,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        extra=out_extra,
    )
