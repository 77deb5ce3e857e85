"""``multihop``: two facts placed far apart, joined by reasoning rather than word matching:
the family class in ``task.py``, its meta type in ``task_meta.py``, its sim skill in
``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration, OverlapClaim

FAMILY = FamilyDeclaration(
    name="multihop",
    family="ctxprobe.families.multihop.task:Multihop",
    sim_skill="ctxprobe.families.multihop.sim:multihop_skill",
    ability="combining two facts placed far apart",
    prompt_layout=True,
    instruction_phrase="Some of its sentences say who works where",
    overlap=OverlapClaim("second_hop", 0.0, "any", "the question shares no word with the second hop's fact"),
    summary="Two facts to combine, spread through the filler.",
)
