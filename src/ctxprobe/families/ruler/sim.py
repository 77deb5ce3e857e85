"""RULER's synthetic tasks (the ``ruler`` family), read from RULER's own wording.

RULER prompts end with a question line followed by an answer prefix, so the sim's question
is that line plus the prefix (:func:`ctxprobe.sim.model.view_prompt`). A perfect reader:

- niah: finds ``One of the special magic … for KEY is: VALUE.`` for every asked key;
- vt: walks ``VAR X = 12345`` / ``VAR Y = VAR X`` in text order and names every variable
  holding the asked value (the worked example holds another value, so it names none there);
- cwe: counts the numbered list after the last instruction (the example's list comes
  first) and names the 10 most frequent, numbered like the example's answer;
- fwe: counts the coded words after the last instruction, ``...`` ignored, names the top 3.
"""

from __future__ import annotations

import re
from collections import Counter

_NIAH_Q = re.compile(r"What (?:is|are all) the special magic (\w+?)s? for (.+?) mentioned in the provided text\?")
_VT_Q = re.compile(r"Find all variables that are assigned the value (\d+) in the text above\.")
_CWE_Q = re.compile(r"What are the (\d+) most common words in the above list\?")
_FWE_Q = re.compile(r"What are the three most frequently appeared words in the above coded text\?")
_ASSIGN = re.compile(r"VAR ([A-Z]+) = (\d+|VAR [A-Z]+)")
_ITEM = re.compile(r"(?<!\S)\d+\. (\S+)")
_CWE_START = "Below is a numbered list of words."
_FWE_START = "Find the three most frequently appeared coded words."


def _keys(query: str) -> list[str]:
    return [k.strip() for k in re.split(r", and |, ", query) if k.strip()]


def ruler_skill(question: str, context: str) -> str | None:
    if m := _NIAH_Q.search(question):
        values: list[str] = []
        for key in _keys(m.group(2)):
            pattern = rf"One of the special magic \w+ for {re.escape(key)} is: ([\w-]+)\."
            values.extend(v for v in re.findall(pattern, context) if v not in values)
        return ", ".join(values)
    if m := _VT_Q.search(question):
        held: dict[str, str] = {}
        for name, source in _ASSIGN.findall(context):
            value = source if source[0].isdigit() else held.get(source[4:])
            if value is not None:
                held[name] = value
            else:
                held.pop(name, None)
        return " ".join(n for n, v in held.items() if v == m.group(1))
    if m := _CWE_Q.search(question):
        tail = context[context.rfind(_CWE_START):] if _CWE_START in context else context
        top = Counter(_ITEM.findall(tail)).most_common(int(m.group(1)))
        return " ".join(f"{i + 1}. {w}" for i, (w, _) in enumerate(top))
    if _FWE_Q.search(question):
        tail = context[context.rfind(_FWE_START) + len(_FWE_START):] if _FWE_START in context else context
        words = [w for w in tail.split() if re.fullmatch(r"[a-z]+", w)]
        return " ".join(w for w, _ in Counter(words).most_common(3))
    return None
