"""RULER's word sources: the ``wonderwords`` lists (the ``ruler`` extra), plus fallbacks.

RULER draws ``words`` keys as ``adjective-noun`` pairs and cwe's words from nouns,
adjectives and verbs of the ``wonderwords`` package; cwe lists longer than that vocabulary
switch to a dictionary file RULER ships (``english_words.json``), which ctxprobe does not
carry: there, pronounceable generated words are used instead (a listed difference).
"""

from __future__ import annotations

import random
import uuid
from functools import lru_cache

from ctxprobe.errors import MissingExtraError


@lru_cache(maxsize=1)
def word_lists() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(nouns, adjectives, verbs) exactly as RULER reads them from ``wonderwords``."""
    try:
        from wonderwords import random_word
    except ImportError:
        raise MissingExtraError("wonderwords", "ruler", "RULER's tasks (their word lists)") from None
    read = random_word._get_words_from_text_file
    return tuple(read("nounlist.txt")), tuple(read("adjectivelist.txt")), tuple(read("verblist.txt"))


@lru_cache(maxsize=1)
def cwe_words() -> tuple[str, ...]:
    """``sorted(set(nouns + adjs + verbs))`` (RULER then shuffles them with its seed)."""
    nouns, adjs, verbs = word_lists()
    return tuple(sorted(set(nouns + adjs + verbs)))


def random_number(rng: random.Random, digits: int = 7) -> str:
    return str(rng.randint(10 ** (digits - 1), 10**digits - 1))


def random_word_key(rng: random.Random) -> str:
    """An ``adjective-noun`` pair, uniform over RULER's list of pairs."""
    nouns, adjs, _ = word_lists()
    return f"{rng.choice(adjs)}-{rng.choice(nouns)}"


def random_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def random_of(kind: str, rng: random.Random) -> str:
    if kind == "numbers":
        return random_number(rng)
    if kind == "words":
        return random_word_key(rng)
    if kind == "uuids":
        return random_uuid(rng)
    raise ValueError(f"unknown RULER needle type {kind!r}")


def unique_of(kind: str, rng: random.Random, taken: set[str]) -> str:
    """A fresh value of ``kind`` not in ``taken`` (added to it): RULER does not check, but a
    repeated key or value would make the answer ambiguous."""
    while True:
        value = random_of(kind, rng)
        if value not in taken:
            taken.add(value)
            return value


_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


def generated_words(rng: random.Random, n: int, banned: set[str]) -> list[str]:
    """n distinct pronounceable lowercase words (cwe beyond the wonderwords vocabulary)."""
    out: list[str] = []
    seen = set(banned)
    while len(out) < n:
        w = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out
