"""Word counting (``aggregation``): the k most frequent words of the visible word lists.

A perfect counter tallies every word of the context's word-list paragraphs (paragraphs
of lowercase words only; the instruction is not one) and names the k with the highest
counts, ties broken by first appearance. It counts only what it can see, so a sim blind
to where the frequent words cluster names rare ones instead.
"""

from __future__ import annotations

import re
from collections import Counter

_QUESTION = re.compile(r"What are the (\d+) most frequent words in the list above\?")
_LIST_PARAGRAPH = re.compile(r"[a-z]+(?: [a-z]+)*")


def aggregation_skill(question: str, context: str) -> str | None:
    asked = _QUESTION.search(question)
    if asked is None:
        return None
    words = [w for para in context.split("\n\n") if _LIST_PARAGRAPH.fullmatch(para.strip()) for w in para.split()]
    return ", ".join(w for w, _ in Counter(words).most_common(int(asked.group(1))))
