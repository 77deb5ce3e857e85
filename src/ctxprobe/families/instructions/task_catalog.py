"""The instruction types ``instructions`` draws, in IFEval's wording and with IFEval's kwargs
(its ``build_description`` texts and argument names; ``lm_eval/tasks/ifeval/instructions.py``),
how a case draws each one's arguments, and how a reader finds them again in a prompt.

Kept to types whose check needs no downloaded data and that one reply can satisfy together
(no JSON wrapping, no sections or paragraph counts that would change the other checks):
see :mod:`ctxprobe.families.instructions.score_checks`. ``keywords:frequency`` is drawn with
IFEval's ``at least`` relation only (a reply that ignores a ``less than`` count passes it).
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable
from typing import Any

ENDINGS = ("Any other questions?", "Is there anything else I can help with?")  # IFEval's _ENDING_OPTIONS
MARKERS = ("P.S.", "P.P.S")  # IFEval's _POSTSCRIPT_MARKER
#: Keywords for keywords:existence / frequency: no one of them inside another, nor inside
#: any word the replies use (checked in tests).
KEYWORDS = ("velvet", "tundra", "quartz", "saffron", "glacier", "nebula", "bamboo", "cobalt", "pelican", "walrus",
            "mosaic", "zephyr", "marzipan", "origami", "lagoon", "falcon", "juniper", "ember")
#: The request's topics, each with the things a note about it names (forbidden words come from these).
TOPICS = (("the garden", ("roses", "hedge", "pond", "shed", "lawn")),
          ("the flat", ("boiler", "windows", "carpet", "balcony", "kitchen")),
          ("the trip", ("tickets", "luggage", "hotel", "train", "passport")),
          ("the party", ("cake", "music", "guests", "candles", "invitations")),
          ("the car", ("tyres", "brakes", "battery", "mirrors", "engine")))
NAMES = ("Dana", "Priya", "Tomas", "Ines", "Kofi", "Mirela", "Oskar", "Yuki", "Leila", "Bram")
TYPES = ("punctuation:no_comma", "detectable_format:title", "detectable_content:postscript", "keywords:existence",
         "keywords:frequency", "keywords:forbidden_words", "detectable_format:number_bullet_lists",
         "startend:end_checker", "detectable_content:number_placeholders",
         "detectable_format:number_highlighted_sections", "startend:quotation")


def describe(iid: str, kw: dict[str, Any]) -> str:
    """IFEval's description of one instruction (its ``build_description`` text; word lists
    sorted, as IFEval sorts them before writing them out)."""
    return {
        "punctuation:no_comma": lambda: "In your entire response, refrain from the use of any commas.",
        "detectable_format:title": lambda: ("Your answer must contain a title, wrapped in double angular brackets,"
                                            " such as <<poem of joy>>."),
        "detectable_content:postscript": lambda: ("At the end of your response, please explicitly add a postscript "
                                                  f"starting with {kw.get('postscript_marker')}"),
        "keywords:existence": lambda: f"Include keywords {sorted(kw.get('keywords') or [])} in the response.",
        "keywords:frequency": lambda: (f"In your response, the word {kw.get('keyword')} should appear "
                                       f"{kw.get('relation')} {kw.get('frequency')} times."),
        "keywords:forbidden_words": lambda: (f"Do not include keywords {sorted(set(kw.get('forbidden_words') or []))} "
                                             "in the response."),
        "detectable_format:number_bullet_lists": lambda: (
            f"Your answer must contain exactly {kw.get('num_bullets')} bullet points. Use the markdown bullet points "
            "such as:\n* This is point 1. \n* This is point 2"),
        "startend:end_checker": lambda: (f"Finish your response with this exact phrase {kw.get('end_phrase')}. "
                                         "No other words should follow this phrase."),
        "detectable_content:number_placeholders": lambda: (
            f"The response must contain at least {kw.get('num_placeholders')} placeholders represented by square "
            "brackets, such as [address]."),
        "detectable_format:number_highlighted_sections": lambda: (
            f"Highlight at least {kw.get('num_highlights')} sections in your answer with markdown, i.e. "
            "*highlighted section*."),
        "startend:quotation": lambda: "Wrap your entire response with double quotation marks.",
    }[iid]()


def draw(rng: random.Random, n: int, topic_words: list[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """``n`` distinct instruction types in a random order, each with its kwargs (word lists
    sorted, so the kwargs read back from the description are the ones stored)."""
    ids = rng.sample(TYPES, n)
    keywords = rng.sample(KEYWORDS, 3)
    makers: dict[str, Callable[[], dict[str, Any]]] = {
        "detectable_content:postscript": lambda: {"postscript_marker": rng.choice(MARKERS)},
        "keywords:existence": lambda: {"keywords": sorted(keywords[:2])},
        "keywords:frequency": lambda: {"keyword": keywords[2], "frequency": rng.randint(1, 3), "relation": "at least"},
        "keywords:forbidden_words": lambda: {"forbidden_words": sorted(rng.sample(topic_words, 2))},
        "detectable_format:number_bullet_lists": lambda: {"num_bullets": rng.randint(1, 5)},
        "startend:end_checker": lambda: {"end_phrase": rng.choice(ENDINGS)},
        "detectable_content:number_placeholders": lambda: {"num_placeholders": rng.randint(1, 4)},
        "detectable_format:number_highlighted_sections": lambda: {"num_highlights": rng.randint(1, 4)},
    }
    kwargs = [makers[iid]() if iid in makers else {} for iid in ids]
    return ids, kwargs


_LIST = r"(\[[^\]\n]*\])"
_FOUND: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("punctuation:no_comma", r"refrain from the use of any commas\.", ()),
    ("detectable_format:title", r"must contain a title, wrapped in double angular brackets", ()),
    ("detectable_content:postscript", r"add a postscript starting with (P\.S\.|P\.P\.S)", ("postscript_marker",)),
    ("keywords:existence", r"Include keywords " + _LIST + r" in the response\.", ("keywords",)),
    ("keywords:frequency", r"the word (\w+) should appear (at least|less than) (\d+) times\.",
     ("keyword", "relation", "frequency")),
    ("keywords:forbidden_words", r"Do not include keywords " + _LIST + r" in the response\.", ("forbidden_words",)),
    ("detectable_format:number_bullet_lists", r"must contain exactly (\d+) bullet points\.", ("num_bullets",)),
    ("startend:end_checker", r"Finish your response with this exact phrase (.+?)\. No other words", ("end_phrase",)),
    ("detectable_content:number_placeholders", r"at least (\d+) placeholders represented by square brackets",
     ("num_placeholders",)),
    ("detectable_format:number_highlighted_sections", r"Highlight at least (\d+) sections in your answer",
     ("num_highlights",)),
    ("startend:quotation", r"Wrap your entire response with double quotation marks\.", ()),
)


def find_instructions(text: str) -> list[tuple[int, str, dict[str, Any]]]:
    """Every instruction stated in ``text`` as (offset, id, kwargs), in reading order, each
    id once (its first statement)."""
    out: list[tuple[int, str, dict[str, Any]]] = []
    for iid, pattern, names in _FOUND:
        m = re.search(pattern, text)
        if m is None:
            continue
        kw: dict[str, Any] = {}
        for name, raw in zip(names, m.groups()):
            kw[name] = ast.literal_eval(raw) if raw.startswith("[") else int(raw) if raw.isdigit() else raw
        out.append((m.start(), iid, kw))
    return sorted(out, key=lambda t: t[0])
