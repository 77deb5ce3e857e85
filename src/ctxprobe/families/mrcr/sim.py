"""Multi-round co-reference (``mrcr``): return the n-th reply to a repeated request.

A reader of the conversation: the context is the chat's messages joined by blank lines,
so a paragraph that reads ``write a {format} about {topic}`` opens a request and the
paragraphs up to the next request are its reply. The n-th reply to the asked format and
topic is returned after the string the question says to prepend; when fewer instances are
visible the answer is that nothing was found.
"""

from __future__ import annotations

import re

_QUESTION = re.compile(r"Prepend (\S+) to the (\d+)(?:st|nd|rd|th) \(1 indexed\) (.+?) about (.+?)\. "
                       r"Do not include any other text")
_REQUEST = re.compile(r"^write an? (.+?) about (.+)$")


def conversation(context: str) -> list[tuple[str, str, str]]:
    """``(format, topic, reply)`` for every request visible in the context, in order."""
    turns: list[tuple[str, str, list[str]]] = []
    for para in context.split("\n\n"):
        m = _REQUEST.match(para.strip())
        if m:
            turns.append((m.group(1), m.group(2), []))
        elif turns:
            turns[-1][2].append(para)
    return [(f, t, "\n\n".join(parts)) for f, t, parts in turns]


def mrcr_skill(question: str, context: str) -> str | None:
    asked = _QUESTION.search(question)
    if asked is None:
        return None
    prefix, n, fmt, topic = asked.group(1), int(asked.group(2)), asked.group(3), asked.group(4)
    replies = [r for f, t, r in conversation(context) if f == fmt and t == topic]
    if n > len(replies):
        return ""
    return prefix + replies[n - 1]
