"""Definition lookup (``documents``): what a sim can honestly answer from a user document.

A sim cannot understand arbitrary prose, so this skill reads one shape only: a question
``What is|are|was|were X?`` (also ``Who ...``) answered by a visible sentence stating
``X is|are|was|were Y.``; it answers ``Y``. It only reads the ``documents`` prompt's
``Question: ...`` paragraph. Anything else it does not recognise (None), so
the sim says it could not find it. Test QA files for sims are written in that shape; real
users' documents are for real models.
"""

from __future__ import annotations

import re

# Anchored on the family's "Question: ..." paragraph so other families' questions never match.
_QUESTION = re.compile(r"^Question: (?:What|Who) (is|are|was|were) (.+?)\?")


def documents_skill(question: str, context: str) -> str | None:
    asked = _QUESTION.search(question)
    if asked is None:
        return None
    subject = " ".join(asked.group(2).split())
    stated = re.search(rf"(?i)\b{re.escape(subject)} (?:is|are|was|were) ([^.\n]+)", context)
    return stated.group(1).strip() if stated else None
