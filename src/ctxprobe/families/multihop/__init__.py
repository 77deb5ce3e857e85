"""``multihop``: two facts placed far apart, joined by reasoning rather than word matching:
the family class in ``task.py``, its meta type in ``task_meta.py``, its sim skill in
``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="multihop",
    family="ctxprobe.families.multihop.task:Multihop",
    sim_skill="ctxprobe.families.multihop.sim:multihop_skill",
)
