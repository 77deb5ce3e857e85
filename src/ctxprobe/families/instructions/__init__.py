"""``instructions``: IFEval's verifiable instructions in a system prompt under a growing load
of user data (``task.py``, ``score.py``); its sim skill and ``sim:capacity`` in ``sim.py``;
IFEval's accuracies per instruction count in ``analysis.py`` and ``report.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="instructions",
    family="ctxprobe.families.instructions.task:Instructions",
    sim_skill="ctxprobe.families.instructions.sim:instructions_skill",
    report_hooks="ctxprobe.families.instructions.report:HOOKS",
    sim_kinds={"capacity": "ctxprobe.families.instructions.sim:CAPACITY"},
)
