"""The update stream of ``updates``, in PI-LLM's wording (Wang & Sun 2025, arXiv 2506.08184,
its ``core/pi_flow_upgrade.py``): ``KEY: VALUE; `` updates (its ``colon`` format), the
keys interleaved so that no key is updated twice in a row (its ``pseudo_randomize`` with
``max_key_repeat=0``), and the mitigation ``forget all the previous updates to KEY; ``
before every update but a key's first (its ``forget`` mode at ``each`` update, ``separate``
grammar). Pure text rules, shared by the task (to write it) and the sim (to read it)."""

from __future__ import annotations

import random
import re

#: PI-LLM's probe target (``probe_target: "current"``).
PROBE = "current"
STREAM_HEAD = "The text stream starts on the next line.\n"
FORGET = "forget all the previous updates to {key}; "
#: Keys: category-like words, capitalised (PI-LLM's keys are the categories of its word dictionary).
KEYS = ("Fruit", "Tool", "Bird", "Metal", "River", "Planet", "Fabric", "Spice", "Flower", "Vehicle", "Insect", "Mineral",
        "Dance", "Sport", "Cheese", "Tree", "Fish", "Color", "Shape", "Drink", "Grain", "Stone", "Cloud", "Island",
        "Engine", "Mammal", "Reptile", "Vessel", "Garment", "Utensil", "Weapon", "Coin", "Bread", "Herb", "Ocean",
        "Desert", "Forest", "Mountain", "Valley", "Harbor", "Bridge", "Castle", "Temple", "Market", "Garden", "Meadow")
UPDATE_RE = re.compile(r"(?<![\w-])([A-Z][a-z]+): (\d+);(?=\s|$)")
FORGET_RE = re.compile(r"forget all the previous updates to ([A-Z][a-z]+); ")


def instruction(keys: list[str]) -> str:
    """PI-LLM's instruction before the stream (a space added between its two sentences)."""
    return ("As my secretary, I need you to carefully read a text stream where the values of multiple keys are being "
            f"continuously updated. The {len(keys)} keys to track include {', '.join(keys)}. "
            "I will ask you to identify the value of each key later.")


def question(keys: list[str]) -> str:
    """PI-LLM's question after the stream (``answer_format: verbal``, ``redundant`` output format)."""
    return (f"What are the {PROBE} value of each key ({', '.join(keys)}) you are tracking? "
            f"End your response with: 'The {PROBE} value of <key> is <value>.'")


QUESTION_RE = re.compile(r"What are the current value of each key \(([A-Za-z, ]+)\) you are tracking\?")


def interleave(rng: random.Random, history: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Every key's updates in its own order, keys interleaved at random with no key twice in
    a row where any other key still has updates left (a single key can only repeat)."""
    left = {k: list(v) for k, v in history.items()}
    out: list[tuple[str, str]] = []
    while any(left.values()):
        last = out[-1][0] if out else None
        weights = {k: len(v) for k, v in left.items() if v}
        choices = [k for k in weights if k != last] or list(weights)
        # draw in proportion to updates left, so long histories do not all bunch at the end
        key = rng.choices(choices, weights=[weights[k] for k in choices])[0]
        out.append((key, left[key].pop(0)))
    return out


def render_stream(pairs: list[tuple[str, str]], *, forget: bool) -> str:
    seen: set[str] = set()
    parts: list[str] = []
    for key, value in pairs:
        if forget and key in seen:
            parts.append(FORGET.format(key=key))
        seen.add(key)
        parts.append(f"{key}: {value}; ")
    return STREAM_HEAD + "".join(parts).rstrip()


def read_stream(text: str) -> dict[str, list[str]]:
    """Every key's values in the order the text states them (``KEY: VALUE;``)."""
    out: dict[str, list[str]] = {}
    for key, value in UPDATE_RE.findall(text):
        out.setdefault(key, []).append(value)
    return out
