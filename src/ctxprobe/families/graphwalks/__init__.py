"""``graphwalks``: operate on a long edge list (OpenAI GraphWalks' shape): the family class
in ``task.py``, its meta type in ``task_meta.py``, its sim skill in ``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="graphwalks",
    family="ctxprobe.families.graphwalks.task:Graphwalks",
    sim_skill="ctxprobe.families.graphwalks.sim:graphwalks_skill",
    ability="following the edges of a graph listed in the context",
    published_sets={"graphwalks": "ctxprobe.families.graphwalks.task_published:GRAPHWALKS"},  # openai/graphwalks'
    summary="Breadth-first search and parents in a graph given as edges.",
)
