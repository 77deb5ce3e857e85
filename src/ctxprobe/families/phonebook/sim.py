"""Phone-book lookup (``phonebook``): answer each asked name from the visible book lines.

Recognises a question with a colon followed by a comma-separated list of 15-letter
lowercase names (the published question shape, whatever its wording before the colon, and
whatever instruction follows the list, e.g. a chain-of-thought request).
Each name is answered ``name : (xxx) xxx-xxxx`` from a visible line ``name : number`` of
the context (earlier turns included, as a model would read worked examples), or
``name : NOT_FOUND`` when no visible line states it — exactly what the system prompt asks.
"""

from __future__ import annotations

import re

_ASKED = re.compile(r":\s*([a-z]{15}(?:\s*,\s*[a-z]{15})*)(?=\s*\.?\s*$|\.?\s+[A-Z])")
_LINE = re.compile(r"^([a-z]{15}) : (\(\d{3}\) \d{3}-\d{4})[ \t]*$", re.MULTILINE)


def phonebook_skill(question: str, context: str) -> str | None:
    asked = _ASKED.search(question.strip())
    if asked is None:
        return None
    names = [n.strip() for n in asked.group(1).split(",")]
    book: dict[str, str] = {}
    for name, number in _LINE.findall(context):
        book.setdefault(name, number)
    return "\n".join(f"{n} : {book.get(n, 'NOT_FOUND')}" for n in names)
