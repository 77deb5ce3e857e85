"""How a simulated model answers ``instructions``.

It reads the request (the question: ``Please write a short note to NAME about TOPIC: the
A, the B and the C.``) and the instructions it finds in the context by IFEval's wording
(:func:`ctxprobe.families.instructions.task_catalog.find_instructions`, in reading order), then
writes the note. Its plain note (no instruction followed) uses commas, names A, B and C
in its middle lines, and has no title, list, placeholder, highlight, postscript, closing
phrase or quotes, so it breaks every instruction type drawn. Each followed instruction
changes the note just enough to meet IFEval's rule (:func:`compose`).

- The skill (``sim:perfect``): follows every instruction it reads.
- ``sim:capacity?n=C`` (:data:`CAPACITY`): follows only the first C instructions it reads
  and writes the rest as the plain note does: IFEval's instruction-level accuracy is
  exactly min(1, C / I) at I instructions, prompt-level 1 up to I = C and 0 beyond: a
  known instruction capacity.
"""

from __future__ import annotations

import re
from typing import Any

from ctxprobe.families.instructions.task_catalog import find_instructions
from ctxprobe.sim.family_kinds import SimKind, SimTurn

_REQUEST = re.compile(r"Please write a short note to (\w+) about (.+?): the (\w+), the (\w+) and the (\w+)\.")


def compose(name: str, topic: str, words: list[str], follow: list[tuple[str, dict[str, Any]]]) -> str:
    """The note, meeting the rules of the instructions in ``follow`` (IFEval ids, kwargs)."""
    got = dict(follow)
    a, b, c = words
    lines = [f"Dear {name},", f"Here is my note about {topic}, as you asked.",
             f"The {a}, the {b} and the {c} are all in good order.",
             f"I will keep an eye on the {a}, the {b} and the {c} this week."]
    if "detectable_format:title" in got:
        lines.insert(0, f"<<A note about {topic}>>")
    if "keywords:existence" in got:
        lines.append("I also thought about " + " and ".join(got["keywords:existence"]["keywords"]) + ".")
    if "keywords:frequency" in got:
        kw = got["keywords:frequency"]
        lines.append("A word for you: " + " ".join([str(kw["keyword"])] * int(kw["frequency"])) + ".")
    if "detectable_content:number_placeholders" in got:
        n = int(got["detectable_content:number_placeholders"]["num_placeholders"])
        lines.append("Details: " + " ".join(f"[detail {i + 1}]" for i in range(n)) + ".")
    if "detectable_format:number_highlighted_sections" in got:
        n = int(got["detectable_format:number_highlighted_sections"]["num_highlights"])
        lines.append("Key points: " + " and ".join(f"*point {i + 1}*" for i in range(n)) + ".")
    if "detectable_format:number_bullet_lists" in got:
        lines += [f"* item {i + 1}" for i in range(int(got["detectable_format:number_bullet_lists"]["num_bullets"]))]
    lines.append("Best wishes.")
    if "detectable_content:postscript" in got:
        lines.append(f"{got['detectable_content:postscript']['postscript_marker']} I will write again soon.")
    if "startend:end_checker" in got:
        lines.append(str(got["startend:end_checker"]["end_phrase"]))
    text = "\n".join(lines)
    if "keywords:forbidden_words" in got:
        for word in got["keywords:forbidden_words"]["forbidden_words"]:
            text = re.sub(rf"\b{re.escape(word)}\b", "item", text, flags=re.IGNORECASE)
    if "punctuation:no_comma" in got:
        text = text.replace(",", "")
    if "startend:quotation" in got:
        text = f'"{text}"'
    return text


def _reply(question: str, context: str, capacity: int | None) -> str | None:
    asked = _REQUEST.search(question)
    if asked is None:
        return None
    found = [(iid, kw) for _, iid, kw in find_instructions(context)]
    follow = found if capacity is None else found[:capacity]
    return compose(asked.group(1), asked.group(2), list(asked.group(3, 4, 5)), follow)


def instructions_skill(question: str, context: str) -> str | None:
    return _reply(question, context, None)


def _capacity(turn: SimTurn) -> str | None:
    reply = _reply(turn.question, turn.context, int(turn.params["n"]))
    return reply if reply is not None else turn.perfect(turn.question, turn.context)


CAPACITY = SimKind({"n": 3, "seed": 0}, _capacity, "follows only the first n instructions it reads")
