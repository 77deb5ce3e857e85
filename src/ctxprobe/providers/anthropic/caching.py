"""Anthropic's prompt caching on the wire: a message's text cut into content blocks at the
cache hint's marks, ``cache_control`` on the largest ones the model caches (the shared
part, marks and :class:`~ctxprobe.models.caching.PrefixGate`, is :mod:`ctxprobe.models.caching`)."""

from __future__ import annotations

from typing import Any

from ctxprobe.core.prefix import CacheHint
from ctxprobe.models.caching import split_text, usable_marks
from ctxprobe.plan.caching import CacheRules


def anthropic_blocks(content: str, index: int, hint: CacheHint | None, rules: CacheRules,
                     ttl: str | None = None) -> str | list[dict[str, Any]]:
    """A message's content (message ``index`` of the prompt) as Messages API text blocks,
    cut at the hint's marks, ``cache_control`` on the blocks ending at the largest
    ``rules.max_breakpoints`` marks the model caches; the plain string when no mark falls
    in it."""
    if hint is None:
        return content
    cuts = [m.offset for m in hint.marks if m.message == index]
    if not cuts:
        return content
    marked = {(m.message, m.offset) for m in usable_marks(hint, rules)[-rules.max_breakpoints:]}
    blocks: list[dict[str, Any]] = []
    for piece, end in split_text(content, cuts):
        block: dict[str, Any] = {"type": "text", "text": piece}
        if (index, end) in marked:
            block["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
        blocks.append(block)
    return blocks
