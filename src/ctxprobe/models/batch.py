"""The batch API of a resolved provider (``ctxprobe run --batch``); see :mod:`.batch_base`."""

from __future__ import annotations

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import Provider
from ctxprobe.models.batch_base import BatchAPI


def batch_api_for(provider: Provider) -> BatchAPI:
    """The batch API of the provider a sweep resolved, or a one-line error naming the ones
    that have one."""
    from ctxprobe.models.anthropic_api import AnthropicProvider
    from ctxprobe.models.gemini_api import GeminiProvider
    from ctxprobe.models.openai_api import OpenAIProvider

    if isinstance(provider, OpenAIProvider):
        from ctxprobe.models.batch_openai import OpenAIBatch

        return OpenAIBatch(provider)
    if isinstance(provider, AnthropicProvider):
        from ctxprobe.models.batch_anthropic import AnthropicBatch

        return AnthropicBatch(provider)
    if isinstance(provider, GeminiProvider):
        from ctxprobe.models.batch_gemini import GeminiBatch

        return GeminiBatch(provider)
    raise CtxprobeError(f"{provider.name} has no batch API: --batch works with openai:, anthropic: and gemini: "
                        "models; drop --batch")
