"""Labels for an output that does not contain the answer: which kind of miss is it?"""

from __future__ import annotations

import re

from ctxprobe.core.outcome import Outcome

_REFUSAL = re.compile(
    r"\b(i can(?:no|')t (?:help|assist|provide|comply)|i(?: a|')m (?:sorry|unable)|i am not able|"
    r"as an ai\b|i won'?t\b|i must decline)",
    re.IGNORECASE,
)
_NOT_FOUND = re.compile(
    r"(not[ _]found|could not find|couldn'?t find|can(?:no|')t find|unable to find|"
    r"no (?:such|special|magic)|not (?:mentioned|present|provided|given|stated)|"
    r"does not (?:contain|mention|appear)|doesn'?t (?:contain|mention|appear)|is not in the text)",
    re.IGNORECASE,
)


def classify_miss(output: str) -> Outcome:
    """``empty``, ``refusal``, ``not_found`` or ``wrong`` for an output without the answer."""
    if not output.strip():
        return Outcome.EMPTY
    if _REFUSAL.search(output):
        return Outcome.REFUSAL
    if _NOT_FOUND.search(output):
        return Outcome.NOT_FOUND
    return Outcome.WRONG
