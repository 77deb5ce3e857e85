"""``mrcr``: multi-round co-reference resolution in a long conversation (OpenAI MRCR's
shape): the family class in ``task.py`` (its conversation's text in ``task_text.py``), its
meta type in ``task_meta.py``, its sim skill in ``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="mrcr",
    family="ctxprobe.families.mrcr.task:Mrcr",
    sim_skill="ctxprobe.families.mrcr.sim:mrcr_skill",
    ability="telling apart repeated requests in a long conversation",
    published_sets={"mrcr": "ctxprobe.families.mrcr.task_published:MRCR"},  # openai/mrcr's files
    summary="Multi-round coreference: the n-th of several look-alike requests in a conversation.",
)
