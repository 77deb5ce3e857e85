"""What a simulated model knows how to do: one *skill* per task family.

A *skill* reads a question and the context visible to the sim and returns the answer a
perfect reader would give, or None when the question is not of its kind. Skills never
see an answer key: only prompt text. Sim kinds (``perfect``, ``blind-middle``, ``decay``)
decide what part of the context is visible and whether the answer survives; skills decide
what the answer is.

A family brings its skill on its declaration, ``sim_skill``
(:class:`ctxprobe.core.declaration.FamilyDeclaration`: a ``"module:attr"`` path, imported
when a sim first answers, or the function itself): ctxprobe's families keep it in
``families/<name>/sim.py``; a plugin's family registered in code the same way::

    registry.register("families", "echo", Echo, sim_skill=echo_skill)

The sim asks every registered family's skill, in family-name order, and takes the first
answer. The skills recognise disjoint questions (each family's prompts are recognised by
its own skill only: ``tests/unit/models/test_sim_skills.py``), so the order decides nothing.

Beside the skills, :mod:`ctxprobe.sim.instructions` says how a sim recognises a
family's instruction text (``sim:late-reader`` reads where it stands).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from ctxprobe.core import registry
from ctxprobe.errors import CtxprobeError

Skill = Callable[[str, str], "str | None"]  # (question, visible context) -> answer


def _skill(entry: registry.Entry) -> Skill | None:
    declared = entry.declaration()
    skill = declared.load("sim_skill")
    if skill is not None and not callable(skill):
        raise CtxprobeError(f"family '{entry.name}': its sim_skill must be a function (question, context) "
                            f"-> answer or a 'module:attr' path, not {type(skill).__name__}")
    return cast("Skill | None", skill)


def skills() -> list[tuple[str, Skill]]:
    """(family name, skill) of every registered family that declares a sim skill, in name order."""
    found = ((entry.name, _skill(entry)) for entry in registry.entries("families"))
    return [(name, skill) for name, skill in found if skill is not None]


def answer(question: str, context: str) -> str | None:
    """The first skill's answer that recognises the question, or None."""
    for _, skill in skills():
        result = skill(question, context)
        if result is not None:
            return result
    return None
