"""Anthropic's options (``anthropic:MODEL?thinking=N&effort=high&cache_ttl=1h``), checked from
the name alone by :func:`check_anthropic` (the registration's ``check``); the shared parsing
is :mod:`ctxprobe.models.options`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.options import ProviderOptions, parse_options


class AnthropicOptions(ProviderOptions):
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    #: ``thinking: {"type": "adaptive"}`` (the model decides how much to think), on the models
    #: that take it (Claude 4.6 and later; the only thinking Opus 4.7 and later take)
    adaptive: bool | None = None
    #: Prompt-cache lifetime of the breakpoints: 5 minutes (the API's default, refreshed
    #: on use) or 1h (writes cost 2× input instead of 1.25×).
    cache_ttl: Literal["5m", "1h"] | None = None
    #: The 1M-token window beta of Claude Sonnet 4 / 4.5 (``context-1m-2025-08-07``), retired
    #: on 2026-04-30 (genai-prices 0.2.3's note on claude-sonnet-4-5, from Anthropic's release
    #: notes): named only to refuse it in one line; the 1M window of newer models needs no option.
    context_1m: bool | None = None

    @field_validator("context_1m")
    @classmethod
    def _retired_beta(cls, value: bool | None) -> bool | None:
        if value:
            raise ValueError("the 1M-window beta (context-1m) was retired on 2026-04-30 and requests over 200K "
                             "tokens fail; drop ?context_1m (Opus 4.6+ and Sonnet 4.6+ have a 1M window without it)")
        return value


def check_anthropic(ref: Any) -> None:
    """Anthropic's options, then what the model's family takes (effort levels, adaptive thinking)."""
    from ctxprobe.providers.anthropic.rules import options_refusal

    options = parse_options(AnthropicOptions, ref.raw or ref.spec, ref.options)
    why = options_refusal(ref.name, options.effort, options.adaptive)
    if why:
        raise CtxprobeError(f"bad model spec '{ref.raw or ref.spec}': {why}")
