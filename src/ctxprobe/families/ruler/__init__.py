"""RULER (NVIDIA/RULER): its synthetic tasks rendered as RULER renders them and scored by
its string match (``task/``: the family, its templates, vocabularies and metrics, the
``ruler`` preset of its 13 tasks), its headline numbers (``analysis.py``), its report hooks
(``report.py``: its scorer, the headline's terminal table and HTML section, ``report_table.py``,
``report_html.py``) and its sim skill (``sim.py``)."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration

FAMILY = FamilyDeclaration(
    name="ruler",
    family="ctxprobe.families.ruler.task.family:Ruler",
    sim_skill="ctxprobe.families.ruler.sim:ruler_skill",
    report_hooks="ctxprobe.families.ruler.report:HOOKS",
    presets={"ruler": "ctxprobe.families.ruler.task.preset:RULER_PRESET"},
    named_bar=0.856,  # RULER's absolute bar
    summary="One of RULER's 13 tasks as RULER renders them (``-T task=niah_single_1``).",
)
