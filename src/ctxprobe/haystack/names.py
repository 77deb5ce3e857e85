"""Invented names: pronounceable nonsense words no model can know beforehand.

Families that state facts about people and places (``multihop``) and the judge's
synthetic labelled set draw their names here, so the facts can only be read from the
text. Each generator takes a ``taken`` set (words already used in one case, updated) and
the words it must ``avoid`` (a template's own words, stopwords).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection

_ONSETS = "b br d dr f g gr h k kr l m n p pl r s sk st t tr v z th".split()
_VOWELS = "a e i o u a e o".split()
_CODAS = ["", "", "", "n", "r", "l", "s", "m", "k", "rn", "nd", "st"]
_CITY_ENDS = ("port", "mouth", "ford", "wick", "by", "holm", "stead", "ton", "mere")


def invented_word(rng: random.Random, syllables: int) -> str:
    """A pronounceable, capitalised nonsense word such as ``Tamber`` or ``Orlan``."""
    parts = [rng.choice(_ONSETS) if i or rng.random() < 0.8 else "" for i in range(syllables)]
    word = "".join(p + rng.choice(_VOWELS) + rng.choice(_CODAS) for p in parts)
    return word.capitalize()


def fresh(rng: random.Random, taken: set[str], make: Callable[[random.Random], str],
          avoid: Collection[str] = ()) -> str:
    """A name whose every word (lowercased) has 3 letters or more, is unused in ``taken``
    and is not in ``avoid``; its words are added to ``taken``."""
    while True:
        name = make(rng)
        words = name.lower().split()
        if all(len(w) >= 3 and w not in taken and w not in avoid for w in words):
            taken.update(words)
            return name


def person_name(rng: random.Random, taken: set[str], avoid: Collection[str] = ()) -> str:
    """``Tamber Orlan``: a two-syllable first name and a one- or two-syllable surname."""
    return fresh(rng, taken, lambda r: f"{invented_word(r, 2)} {invented_word(r, r.choice((1, 2)))}", avoid)


def city_name(rng: random.Random, taken: set[str], avoid: Collection[str] = ()) -> str:
    """``Brenport``: an invented word with a town's ending."""
    return fresh(rng, taken, lambda r: invented_word(r, r.choice((1, 2))) + r.choice(_CITY_ENDS), avoid)
