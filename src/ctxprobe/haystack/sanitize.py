"""Sentence splitting and cleanliness checks for filler text.

Filler must never contain anything that looks like a needle or an answer: a long run of
digits could be mistaken for (or collide with) a 7-digit value, a ``word-word-123`` string
for a key, and the phrase "magic number" for a needle itself. Sentences that do are dropped
rather than edited, so the remaining text stays natural.
"""

from __future__ import annotations

import re

_LONG_DIGITS = re.compile(r"\d{5,}")
_KEY_LIKE = re.compile(r"[A-Za-z]+-[A-Za-z]+-\d+")
_MAGIC_NUMBER = re.compile(r"magic\s+number", re.IGNORECASE)

_WHITESPACE = re.compile(r"\s+")
# Split after terminal punctuation (optionally followed by a closing quote or bracket)
# when the next sentence starts with a capital letter or an opening quote.
_BOUNDARY = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]\u201d\u2019])) (?=[A-Z\"'\u201c\u2018(])"
)

MAX_SENTENCE_CHARS = 400


def is_clean_sentence(s: str) -> bool:
    """True if ``s`` holds nothing a needle, key or answer could be confused with."""
    return not (_LONG_DIGITS.search(s) or _KEY_LIKE.search(s) or _MAGIC_NUMBER.search(s))


def _break_long(sentence: str, limit: int = MAX_SENTENCE_CHARS) -> list[str]:
    """Cut an over-long run (lists, tables, unpunctuated text) into filler-sized pieces."""
    pieces: list[str] = []
    rest = sentence
    while len(rest) > limit:
        cut = rest.rfind(", ", 0, limit)
        if cut >= limit // 2:  # a comma far enough in that the piece is not a stub
            head, rest = rest[: cut + 1], rest[cut + 2 :]
        else:
            cut = rest.rfind(" ", 0, limit + 1)
            if cut > 0:
                head, rest = rest[:cut], rest[cut + 1 :]
            else:  # a single enormous token: no boundary exists, cut hard
                head, rest = rest[:limit], rest[limit:]
        pieces.append(head.strip())
    pieces.append(rest.strip())
    return [p for p in pieces if p]


def split_sentences(text: str) -> list[str]:
    """Split free text into single-line sentences of at most 400 characters."""
    flat = _WHITESPACE.sub(" ", text).strip()
    if not flat:
        return []
    out: list[str] = []
    for sentence in _BOUNDARY.split(flat):
        sentence = sentence.strip()
        if not sentence:
            continue
        if len(sentence) > MAX_SENTENCE_CHARS:
            out.extend(_break_long(sentence))
        else:
            out.append(sentence)
    return out
