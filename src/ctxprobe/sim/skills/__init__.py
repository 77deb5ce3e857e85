"""What a simulated model knows how to do, one module per task family.

A *skill* reads a question and the context visible to the sim and returns the answer a
perfect reader would give, or None when the question is not of its kind. Skills never
see an answer key: only prompt text. Sim kinds (``perfect``, ``blind-middle``, ``decay``)
decide what part of the context is visible and whether the answer survives; skills decide
what the answer is. A new family adds a module here and a line to :data:`SKILLS`.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxprobe.sim.skills.niah import niah_skill
from ctxprobe.sim.skills.documents import documents_skill
from ctxprobe.sim.skills.multihop import multihop_skill
from ctxprobe.sim.skills.phonebook import phonebook_skill
from ctxprobe.sim.skills.vartrack import vartrack_skill
from ctxprobe.sim.skills.aggregation import aggregation_skill
from ctxprobe.sim.skills.ruler import ruler_skill
from ctxprobe.sim.skills.mrcr import mrcr_skill
from ctxprobe.sim.skills.graphwalks import graphwalks_skill

Skill = Callable[[str, str], "str | None"]  # (question, visible context) -> answer

#: Tried in order; the first skill that recognises the question answers it.
SKILLS: list[Skill] = [mrcr_skill, graphwalks_skill, ruler_skill, niah_skill, multihop_skill, documents_skill, phonebook_skill, vartrack_skill,
                       aggregation_skill]


def answer(question: str, context: str) -> str | None:
    for skill in SKILLS:
        result = skill(question, context)
        if result is not None:
            return result
    return None
