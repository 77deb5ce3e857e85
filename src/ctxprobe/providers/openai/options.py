"""OpenAI's options (``openai:MODEL?reasoning_effort=low&api=chat``), checked from the name
alone by :func:`check_openai` (the registration's ``check``); the shared parsing is
:mod:`ctxprobe.models.options`."""

from __future__ import annotations

from typing import Any, Literal

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.options import ProviderOptions, parse_options


class OpenAIOptions(ProviderOptions):
    #: openai-python's ``ReasoningEffort`` values; which a model takes: :mod:`ctxprobe.providers.openai.responses`
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None
    #: ``responses`` (the default for reasoning models; the only one for pro models) or ``chat``
    #: (chat completions, the default for the others)
    api: Literal["responses", "chat"] | None = None
    #: Force (True) or forbid (False) the reasoning-model request shape (no temperature,
    #: ``max_completion_tokens``); ``None`` guesses from the model name (o1/o3/o4/gpt-5).
    reasoning: bool | None = None


def check_openai(ref: Any) -> None:
    """OpenAI's options, then the effort levels and API the model takes."""
    from ctxprobe.providers.openai.responses import options_refusal

    options = parse_options(OpenAIOptions, ref.raw or ref.spec, ref.options)
    why = options_refusal(ref.name, options.reasoning_effort, options.api)
    if why:
        raise CtxprobeError(f"bad model spec '{ref.raw or ref.spec}': {why}")
