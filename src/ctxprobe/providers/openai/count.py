"""``openai-count:MODEL``: OpenAI's ``responses.input_tokens.count`` as a tokenizer
(:mod:`ctxprobe.tokenizers.api_count`: exact chat counts, calibrated text estimates).

tiktoken counts text, not a request: it cannot count a tool declaration or how the API
wraps each message, so a ``tools`` layout (docs/layouts.md) refuses it. This asks the API
for the count of the conversation as the Responses API sends it — the same ``input``
items and ``tools`` as :func:`ctxprobe.providers.openai.responses.responses_body` — which
is the request's own count for a Responses-API model. A Chat Completions model is sent the
same conversation as messages; its server's own count comes back with every answer and
the report says when it is larger than the case was built to (``prompt_overcounts``).
"""

from __future__ import annotations

from typing import Any

from ctxprobe.errors import MissingExtraError
from ctxprobe.tokenizers import bad_tokenizer
from ctxprobe.tokenizers.api_count import APICountTokenizer
from ctxprobe.tokenizers.base import Message, Tokenizer


def openai_count(name: str, rest: str) -> Tokenizer:
    """The ``openai-count`` scheme (registered with the provider's declaration)."""
    if not rest:
        raise bad_tokenizer(name, "openai-count needs a model name, e.g. openai-count:gpt-5")
    return OpenAICountTokenizer(rest, name=name)


class OpenAICountTokenizer(APICountTokenizer):
    """``responses.input_tokens.count`` with the conversation's ``input`` items and, for a
    tools layout, its ``function_call``/``function_call_output`` items and tool declared."""

    #: Counts tool calls, tool results and the tool declaration as the request sends them.
    counts_tool_messages = True

    def __init__(self, model: str, name: str | None = None, base_url: str | None = None) -> None:
        super().__init__(name or f"openai-count:{model}", model)
        try:
            import openai
        except ImportError:
            raise MissingExtraError("openai", "openai", f"The {self.name} tokenizer") from None
        self._sdk = openai
        self._client = openai.OpenAI(**self._client_kwargs(("OPENAI_API_KEY",), "OPENAI_BASE_URL", base_url))

    def _api_count(self, messages: list[Message]) -> int:
        from ctxprobe.providers.openai.responses import responses_input, responses_tools

        kwargs: dict[str, Any] = {"model": self.model, "input": responses_input(messages)}
        if (tools := responses_tools(messages)) is not None:
            kwargs["tools"] = tools
        try:
            return int(self._client.responses.input_tokens.count(**kwargs).input_tokens)
        except self._sdk.APIError as exc:
            raise self._fail(exc) from None
