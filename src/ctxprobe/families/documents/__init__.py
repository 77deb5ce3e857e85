"""``documents``: the user's own natural cases, placed at a depth inside filler: the family
class in ``task.py`` (its documents read and placed in ``task_sources.py``), its meta type
in ``task_meta.py``, its sim skill in ``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="documents",
    family="ctxprobe.families.documents.task:Documents",
    sim_skill="ctxprobe.families.documents.sim:documents_skill",
)
