"""What a family needs from outside to build cases (the protocol itself is
:class:`ctxprobe.core.family.Family`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxprobe.spec import PromptLayout
from ctxprobe.tokenizers.base import Tokenizer


@dataclass(frozen=True)
class BuildContext:
    """What a family needs from outside to build cases."""

    tokenizer: Tokenizer
    haystack: str | None  # None: built-in prose; else a directory of the user's text
    layout: PromptLayout = field(default_factory=PromptLayout)  # instruction position, depth-0 separator
    #: Build the no-context twin: the same question and length, filler only (the family's
    #: evidence removed; ``--baseline no-context``, :mod:`ctxprobe.core.baseline`).
    no_context: bool = False
