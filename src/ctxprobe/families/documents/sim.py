"""Definition lookup (``documents``): what a sim can honestly answer from a user document.

A sim cannot understand arbitrary prose, so this skill reads one shape only: a question
``What is|are|was|were X?`` (also ``Who ...``) answered by a visible sentence stating
``X is|are|was|were Y.``; it answers ``Y``. It only reads the ``documents`` prompt's
``Question: ...`` paragraph. Anything else it does not recognise (None), so
the sim says it could not find it.

Every other question of the family (free or multiple choice) is read by
:mod:`ctxprobe.sim.freeform` (best-matching sentence, answer span by a fixed rule),
and a question-drafting request by :mod:`ctxprobe.sim.drafting`.
"""

from __future__ import annotations

import re

from ctxprobe.sim.drafting import drafting_skill
from ctxprobe.sim.freeform import freeform_skill

# Anchored on the family's "Question: ..." paragraph so other families' questions never match.
_QUESTION = re.compile(r"^Question: (?:What|Who) (is|are|was|were) (.+?)\?")


def documents_skill(question: str, context: str) -> str | None:
    asked = _QUESTION.search(question)
    if asked is not None:
        subject = " ".join(asked.group(2).split())
        stated = re.search(rf"(?i)\b{re.escape(subject)} (?:is|are|was|were) ([^.\n]+)", context)
        if stated:
            return stated.group(1).strip()
    return drafting_skill(question, context) or freeform_skill(question, context)
