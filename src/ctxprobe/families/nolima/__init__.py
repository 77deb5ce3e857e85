"""NoLiMa (adobe-research/NoLiMa): its needle set's questions in ctxprobe's haystack, scored
by NoLiMa's own metric (``task.py``); its sim skill in ``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="nolima",
    family="ctxprobe.families.nolima.task:Nolima",
    sim_skill="ctxprobe.families.nolima.sim:nolima_skill",
    named_bar="relative:0.85",  # NoLiMa's: 85% of the model's own score at its shortest length
)
