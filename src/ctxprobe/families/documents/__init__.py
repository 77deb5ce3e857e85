"""``documents``: the user's own natural cases, placed at a depth inside filler: the family
class in ``task.py`` (its documents read and placed in ``task_sources.py``), its meta type
in ``task_meta.py``, its sim skill in ``sim.py``."""

from __future__ import annotations

from ctxprobe.core.declaration import FamilyDeclaration, OverlapClaim

FAMILY = FamilyDeclaration(
    name="documents",
    family="ctxprobe.families.documents.task:Documents",
    sim_skill="ctxprobe.families.documents.sim:documents_skill",
    ability="answering from your own documents",
    prompt_layout=True,
    instruction_phrase="Somewhere in it is a document that answers the question",
    overlap=OverlapClaim(None, 0.3, "mean", "the user's own questions, checked one by one or not at all"),
    published_sets={"longbench-v2": "ctxprobe.families.documents.task_published:LONGBENCH_V2",
                    "longmemeval": "ctxprobe.families.documents.task_published:LONGMEMEVAL",
                    "oolong-synth": "ctxprobe.families.documents.task_published:OOLONG_SYNTH",
                    "oolong-real": "ctxprobe.families.documents.task_published:OOLONG_REAL"},
    summary="Question answering over your documents (``-T docs=PATH``).",
)
