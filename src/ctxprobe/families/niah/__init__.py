"""``niah``: retrieve facts stated once (needle in a haystack), optionally under
interference: the family class in ``task.py``, its meta type in ``task_meta.py``, its sim
skill in ``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="niah",
    family="ctxprobe.families.niah.task:Niah",
    sim_skill="ctxprobe.families.niah.sim:niah_skill",
    ability="retrieving one fact stated once",
    label_abilities={"multikey": "retrieving one fact among look-alikes",
                     "multivalue": "retrieving every value of one key", "multiquery": "retrieving several facts at once"},
    prompt_layout=True,
    instruction_phrase="Hidden in it are special magic numbers",
    plain_retrieval=True,
    summary="A fact hidden in filler at each depth (``-T distractors=N`` same-form decoys).",
)
