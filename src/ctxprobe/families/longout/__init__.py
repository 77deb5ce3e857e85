"""``longout``: long outputs (LongProc's HTML→TSV): every matching record of a long page as
TSV rows (``task.py``, ``score.py``); its sim skill and ``sim:out-budget`` in ``sim.py``;
the output effective length in ``analysis.py`` and ``report.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="longout",
    family="ctxprobe.families.longout.task:Longout",
    sim_skill="ctxprobe.families.longout.sim:longout_skill",
    report_hooks="ctxprobe.families.longout.report:HOOKS",
    sim_kinds={"out-budget": "ctxprobe.families.longout.sim:OUT_BUDGET"},
)
