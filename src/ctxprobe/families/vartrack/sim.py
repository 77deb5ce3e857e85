"""Variable tracking (``vartrack``): resolve every visible assignment, list the holders.

A perfect reader walks the assignments in text order (``VAR_A = 123.`` binds a number,
``VAR_B = VAR_A.`` copies what VAR_A holds at that point) and names every variable that
ends up holding the asked value. An assignment from a variable it never saw binds nothing,
so a sim that cannot see part of a chain loses the hops after the gap.
"""

from __future__ import annotations

import re

_QUESTION = re.compile(r"Which variables hold the value (\d+)\b")
_ASSIGNMENT = re.compile(r"(?<![A-Za-z0-9_])(VAR_[A-Z]+) = (\d+|VAR_[A-Z]+)(?![A-Za-z0-9_])")


def vartrack_skill(question: str, context: str) -> str | None:
    asked = _QUESTION.search(question)
    if asked is None:
        return None
    held: dict[str, str] = {}
    for name, source in _ASSIGNMENT.findall(context):
        value = source if source[0].isdigit() else held.get(source)
        if value is not None:
            held[name] = value
        else:
            held.pop(name, None)
    return ", ".join(name for name, value in held.items() if value == asked.group(1))
