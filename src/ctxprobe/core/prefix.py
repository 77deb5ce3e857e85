"""Where a prompt's prefix is shared with other prompts of its group: what prompt caching
reads (Anthropic breakpoints, OpenAI ``prompt_cache_key``, Gemini cached contents).

Computed from the built prompts themselves (:mod:`ctxprobe.cases.prefixes`), carried by a
case to its request (never stored: it changes what a request costs, not what it asks)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PrefixMark:
    """A point of a prompt: the text before ``offset`` characters of message ``message``
    (and every message before it) is shared with another prompt of the group."""

    message: int  # index into the prompt's messages
    offset: int  # characters of that message's content before the mark
    tokens: int  # prompt tokens before the mark (the run's tokenizer; the template's own tokens aside)


@dataclass(frozen=True)
class CacheHint:
    """How one request of a prefix group may use a prompt cache.

    ``marks`` (ascending) are the group's shared-prefix boundaries that lie inside this
    prompt's shared part: the same points in every member, so their prefixes are
    byte-identical up to each one. ``reads`` is the longest prefix (tokens) this prompt
    shares with a member sent before it; ``first`` says no member was sent before it."""

    key: str  # names the group's shared prefix (stable, no secret): cache keys, cache names
    marks: tuple[PrefixMark, ...]
    reads: int = 0
    first: bool = False
    size: int = 1  # members of the group
    explicit: bool = False  # Gemini: explicit CachedContent even where implicit caching exists
