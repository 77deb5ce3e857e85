"""``aggregation``: the most frequent words of a long list (RULER's ``cwe``/``fwe``): the
family class in ``task.py``, its meta type in ``task_meta.py``, its sim skill in
``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="aggregation",
    family="ctxprobe.families.aggregation.task:Aggregation",
    sim_skill="ctxprobe.families.aggregation.sim:aggregation_skill",
    ability="aggregating information spread over the whole context",
    prompt_layout=True,
    instruction_phrase="Some words occur more often than others",
    summary="The most frequent words of a long list.",
)
