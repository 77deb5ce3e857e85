"""``vartrack``: follow a chain of variable assignments through a long text: the family class
in ``task.py``, its meta type in ``task_meta.py``, its sim skill in ``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="vartrack",
    family="ctxprobe.families.vartrack.task:Vartrack",
    sim_skill="ctxprobe.families.vartrack.sim:vartrack_skill",
    ability="tracking a chain of references",
    prompt_layout=True,
    instruction_phrase="Hidden in it are variable assignments",
    summary="Variable assignment chains to follow.",
)
