"""How a simulated model recognises a task's instruction in a prompt (``sim:late-reader``).

A model that follows instructions knows them by their wording, as a skill knows its
family's question by its shape. One phrase per family with an instruction text (its
declaration's ``instruction_phrase``): a phrase that stays when the prompt layout rewords
the instruction's opening ("A long text follows." / "The long text is above."), so either
placement is recognised. Prompt text only, never an answer key. A family that declares
none (or an instruction reworded past its
phrase) has no instruction the sim can see: it reads such a prompt as one whose
instruction never comes late. ``tests/unit/models/test_sim_late_reader.py`` checks every phrase
against its family's instruction.
"""

from __future__ import annotations

from ctxprobe.core import registry


def instruction_phrases() -> dict[str, str]:
    """Family name → a phrase of its instruction text (its declaration's ``instruction_phrase``),
    for every registered family that declares one."""
    found = ((e.name, e.declaration().instruction_phrase) for e in registry.entries("families"))
    return {name: phrase for name, phrase in found if phrase}


def last_instruction_at(text: str) -> float | None:
    """Where the last instruction phrase of ``text`` starts, as a share of its length
    (0 = the start), or None when the text states no instruction."""
    at = max((text.rfind(phrase) for phrase in instruction_phrases().values()), default=-1)
    return at / len(text) if at >= 0 and text else None
