"""Gemini's options (``gemini:MODEL?thinking=N``): the shared ones only
(:class:`ctxprobe.models.options.ProviderOptions`), checked from the name alone."""

from __future__ import annotations

from ctxprobe.models.options import ProviderOptions, check_options


class GeminiOptions(ProviderOptions):
    pass


check_gemini = check_options(GeminiOptions)
