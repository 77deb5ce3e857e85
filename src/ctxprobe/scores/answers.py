"""Short answers matched SQuAD-style: what the ``documents`` family scores with, and what
the simulated judge and the natural-case checks (``draft-questions``) match answers by.

Normalisation: lowercase; punctuation and symbols deleted (``3,000`` → ``3000``,
``Quil-port`` → ``quilport``); the articles ``a``, ``an``, ``the`` removed (unless the
text is nothing but articles, so a multiple-choice answer ``A`` survives); whitespace
collapsed. An answer is *contained* in a reply when its normalised words occur in the
normalised reply as whole words.
"""

from __future__ import annotations

import re

_PUNCT = re.compile(r"[^\w\s]|_")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lowercase, delete punctuation, drop articles, collapse whitespace (the module docstring)."""
    words = _PUNCT.sub("", text.lower()).split()
    kept = [w for w in words if not _ARTICLES.fullmatch(w)]
    return " ".join(kept or words)  # an answer that is only an article ("A") stays itself


def contains_answer(output: str, answer: str) -> bool:
    """Whether the normalised ``answer`` occurs in the normalised ``output`` as whole words."""
    return f" {normalize_answer(answer)} " in f" {normalize_answer(output)} "
