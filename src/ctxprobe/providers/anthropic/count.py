"""``anthropic-count:MODEL``: Anthropic's ``messages.count_tokens`` as a tokenizer
(:mod:`ctxprobe.tokenizers.api_count`: exact chat counts, calibrated text estimates)."""

from __future__ import annotations

from typing import Any

from ctxprobe.errors import MissingExtraError
from ctxprobe.tokenizers.api_count import APICountTokenizer
from ctxprobe.tokenizers import bad_tokenizer
from ctxprobe.tokenizers.base import Message, Tokenizer


def anthropic_count(name: str, rest: str) -> Tokenizer:
    """The ``anthropic-count`` scheme (registered with the provider's declaration)."""
    if not rest:
        raise bad_tokenizer(name, "anthropic-count needs a model name, e.g. anthropic-count:MODEL")
    return AnthropicCountTokenizer(rest, name=name)


class AnthropicCountTokenizer(APICountTokenizer):
    """``messages.count_tokens``; system messages go in ``system`` as for generation, a
    tools layout's conversation as ``tool_use``/``tool_result`` blocks with its tool
    declared, as for generation (:func:`ctxprobe.core.tools.anthropic_turns`)."""

    #: Counts tool calls, tool results and the tool declaration as the request sends them.
    counts_tool_messages = True

    def __init__(self, model: str, name: str | None = None, base_url: str | None = None) -> None:
        super().__init__(name or f"anthropic-count:{model}", model)
        try:
            import anthropic
        except ImportError:
            raise MissingExtraError("anthropic", "anthropic", f"The {self.name} tokenizer") from None
        self._sdk = anthropic
        self._client = anthropic.Anthropic(**self._client_kwargs(("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", base_url))

    def _api_count(self, messages: list[Message]) -> int:
        from ctxprobe.core.tools import anthropic_tools, anthropic_turns

        system, rest = anthropic_turns(messages)
        kwargs: dict[str, Any] = {"model": self.model, "messages": rest}
        if system is not None:
            kwargs["system"] = system
        if (tools := anthropic_tools(messages)) is not None:
            kwargs["tools"] = tools
        try:
            return int(self._client.messages.count_tokens(**kwargs).input_tokens)
        except self._sdk.APIError as exc:
            raise self._fail(exc) from None
