"""Two-hop lookup (``multihop``): person → organisation → city, read from visible text only.

The skill reads like a careful reader of the prompt, never an answer key: it takes the
person named in the question (two capitalised words), finds a visible sentence that puts
that person at "the <Name> <kind>", then a visible sentence placing that organisation
"in <City>". If either fact is not visible it does not recognise the question (None), so
the sim answers that it could not find it. It knows the family's sentence shapes, nothing
more: it would not follow a chain stated in other words.
"""

from __future__ import annotations

import re

_PERSON = re.compile(r"\b([A-Z][a-z]+ [A-Z][a-z]+)(?:'s)?\b")
_ORG = re.compile(r"\bthe ([A-Z][a-z]+) [a-z]+\b")
_CITY = re.compile(r"\bin ([A-Z][a-z]+)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def multihop_skill(question: str, context: str) -> str | None:
    if "city" not in question.lower():
        return None
    person = _PERSON.search(question)
    if person is None:
        return None
    sentences = _SENTENCE.split(context)
    orgs = [m.group(1) for s in sentences if person.group(1) in s for m in [_ORG.search(s)] if m]
    for org in orgs:
        for s in sentences:
            if re.search(rf"\b{re.escape(org)}\b", s) and person.group(1) not in s:
                city = _CITY.search(s)
                if city:
                    return city.group(1)
    return None
