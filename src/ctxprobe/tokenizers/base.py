"""The tokenizer protocol every backend implements.

Lengths in ctxprobe are measured in the model's own tokens, counting the *fully
chat-templated* prompt (system/user wrappers, BOS, generation prompt), because that is
what occupies the context window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar, runtime_checkable

from ctxprobe.core.case import Message
from ctxprobe.core.optional import fill_defaults

_T = TypeVar("_T")


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

    The optional members (declared with their defaults on :class:`TokenizerBase`, which
    every backend inherits; a plugin's that does not is given them by
    :func:`ctxprobe.tokenizers.resolve_tokenizer`): ``count_many(texts)`` (batched
    counting, the hot path of the case builder), ``count_segments(texts)`` (GGUF: the
    same counts from one call over the joined texts), ``encode_chat_compact(messages)``
    (GGUF: the ids as a 4-byte ``array`` for build workers), ``is_approximate`` and
    ``warning``, ``observe(prompt, reported_tokens)`` (an estimate learns from the server).
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

    # Optional members, with their defaults on TokenizerBase (every resolved tokenizer has
    # them: backends inherit the base, a plugin's is given them by resolve_tokenizer).
    # Read-only here: a backend may declare them as class attributes or properties alike.
    @property
    def is_approximate(self) -> bool: ...

    @property
    def warning(self) -> str | None: ...

    def count_many(self, texts: list[str]) -> list[int]: ...

    def count_segments(self, texts: list[str]) -> list[int]: ...

    def encode_chat_compact(self, messages: list[Message]) -> Sequence[int]: ...

    def observe(self, text_or_messages: str | list[Message], reported_tokens: int) -> None: ...


@runtime_checkable
class SupportsCountMany(Protocol):
    """Optional batched counting: one call for many texts (each counted like ``count``)."""

    def count_many(self, texts: list[str]) -> list[int]:
        """``[self.count(t) for t in texts]``, computed faster where the backend can."""
        ...


class TokenizerBase:
    """The optional members of a tokenizer, each declared once with its default (and the
    derived counts, from ``encode``/``encode_chat``). ctxprobe's backends inherit it; a
    plugin's tokenizer that does not is given the defaults it lacks where it is made
    (:func:`with_tokenizer_defaults`, called by :func:`ctxprobe.tokenizers.resolve_tokenizer`),
    so callers read plain attributes."""

    #: Counts are estimates (the sweep says so loudly, with :attr:`warning`).
    is_approximate: bool = False

    # Read-only properties, so a backend may compute them (from its files, from a server).
    @property
    def warning(self) -> str | None:
        """The notice the sweep prints for an approximate tokenizer (None: a generic one)."""
        return None

    @property
    def chat_template_hash(self) -> str | None:
        """sha256 (hex, first 16) of the chat template source, if any."""
        return None

    @property
    def trained_context(self) -> int | None:
        """The model's trained context when the tokenizer's files say it."""
        return None

    # The two members every backend defines; the derived counts below are built on them.
    def encode(self, text: str) -> list[int]:
        raise NotImplementedError(f"{type(self).__qualname__} must define encode()")

    def encode_chat(self, messages: list[Message]) -> list[int]:
        raise NotImplementedError(f"{type(self).__qualname__} must define encode_chat()")

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_chat(self, messages: list[Message]) -> int:
        return len(self.encode_chat(messages))

    def count_many(self, texts: list[str]) -> list[int]:
        """``[self.count(t) for t in texts]``; backends batch it where they can."""
        return [self.count(t) for t in texts]

    def count_segments(self, texts: list[str]) -> list[int]:
        """The same counts as :meth:`count_many`; GGUF computes them in one call over the
        joined texts (the filler word cache's hot path)."""
        return self.count_many(texts)

    def encode_chat_compact(self, messages: list[Message]) -> Sequence[int]:
        """The templated prompt's ids, as compact as the backend can hand them over (GGUF:
        a 4-byte ``array``, for build workers); by default :meth:`encode_chat`'s list."""
        return self.encode_chat(messages)

    def observe(self, text_or_messages: str | list[Message], reported_tokens: int) -> None:
        """Learn from a prompt and the token count a server reported for it (an approximate
        counter recalibrates); exact tokenizers ignore it."""
        return None


#: The optional members :class:`TokenizerBase` declares.
TOKENIZER_OPTIONAL: tuple[str, ...] = ("is_approximate", "warning", "chat_template_hash", "trained_context", "count",
                                       "count_chat", "count_many", "count_segments", "encode_chat_compact", "observe")


def with_tokenizer_defaults(tokenizer: _T) -> _T:
    """``tokenizer`` with every optional member it lacks set from :class:`TokenizerBase`."""
    return fill_defaults(tokenizer, TokenizerBase, TOKENIZER_OPTIONAL, "tokenizer")
