"""The tokenizer protocol every backend implements.

Lengths in ctxprobe are measured in the model's own tokens, counting the *fully
chat-templated* prompt (system/user wrappers, BOS, generation prompt), because that is
what occupies the context window.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ctxprobe.core.case import Message


def split_prefill(messages: list[Message]) -> tuple[list[Message], str | None]:
    """``(messages before it, prefix)`` when the chat ends with an assistant message.

    A trailing assistant message is an *answer prefix* (a prefill): the model continues it
    rather than starting a new turn. Its templated form is the chat before it rendered with
    the generation prompt, then the prefix verbatim — what RULER's prepare step builds
    (model template + answer prefix). ``None`` when the chat ends with another role."""
    if len(messages) > 1 and messages[-1].get("role") == "assistant":
        return messages[:-1], str(messages[-1].get("content") or "")
    return messages, None


def fold_prefill(messages: list[Message]) -> list[Message]:
    """The chat with its answer prefix appended to the last user turn: for APIs that take
    no prefill (what RULER's own API clients send: input + answer prefix as one prompt)."""
    head, prefix = split_prefill(messages)
    if prefix is None:
        return messages
    last = max((i for i, m in enumerate(head) if m.get("role") == "user"), default=len(head) - 1)
    return [*head[:last], {**head[last], "content": str(head[last].get("content") or "") + prefix}, *head[last + 1:]]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens the way the model sees them.

    Backends may also offer ``count_many(texts) -> list[int]`` (see
    :class:`SupportsCountMany`): batched counting is the hot path of the case builder.
    It is kept out of this protocol so that backends without it still satisfy
    ``isinstance(x, Tokenizer)``; callers fall back to ``[count(t) for t in texts]``.
    ``count_segments(texts)`` (GGUF) gives the same counts from one call over the joined
    texts; the filler word cache (:mod:`ctxprobe.haystack.counting`) uses it when present,
    and ``encode_chat_compact(messages)`` (GGUF) returns the ids as a 4-byte ``array``
    for build workers.
    """

    #: The spec string that names this tokenizer, e.g. ``gguf:/path/model.gguf``.
    name: str

    def encode(self, text: str) -> list[int]:
        """Token ids of plain text, no special tokens added (BOS etc.)."""
        ...

    def count(self, text: str) -> int:
        """``len(self.encode(text))``; backends may implement it faster."""
        ...

    def render_chat(self, messages: list[Message]) -> str:
        """The prompt text after the chat template, with the generation prompt appended."""
        ...

    def encode_chat(self, messages: list[Message]) -> list[int]:
        """Token ids of the fully templated prompt exactly as the model receives it."""
        ...

    def count_chat(self, messages: list[Message]) -> int:
        """``len(self.encode_chat(messages))``."""
        ...

    @property
    def chat_template_hash(self) -> str | None:
        """sha256 (hex, first 16 chars) of the chat template source, if any."""
        ...

    @property
    def trained_context(self) -> int | None:
        """The model's trained context length when the tokenizer's files say it."""
        ...


@runtime_checkable
class SupportsCountMany(Protocol):
    """Optional batched counting: one call for many texts (each counted like ``count``)."""

    def count_many(self, texts: list[str]) -> list[int]:
        """``[self.count(t) for t in texts]``, computed faster where the backend can."""
        ...
