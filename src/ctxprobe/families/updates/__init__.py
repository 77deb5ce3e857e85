"""``updates``: proactive interference (PI-LLM): keys overwritten many times, their final
values asked (``task.py``, ``score.py``); its sim skill and ``sim:interference`` in
``sim.py``; PI-LLM's log-U curve in ``analysis.py`` and ``report.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="updates",
    family="ctxprobe.families.updates.task:Updates",
    sim_skill="ctxprobe.families.updates.sim:updates_skill",
    report_hooks="ctxprobe.families.updates.report:HOOKS",
    sim_kinds={"interference": "ctxprobe.families.updates.sim:INTERFERENCE"},
)
