"""NoLiMa's questions (``families/nolima/task.py``, NoLiMa's ``DEFAULT_TASK_TEMPLATE``): the prompt
ends with ``Question: ...`` then ``Return only the final answer ...``, so the sim's last
paragraph is that instruction, and the question is the paragraph before it.

A sim reads the book snippet as it reads any document (:func:`freeform.read`: the sentence
that best matches the question's words, the answer span by the question's type). It has
no world knowledge beyond :data:`freeform.KNOWLEDGE`, so a needle linked to its question
only through a latent hop (the Semper Opera House for Dresden) is usually missed, as a
lexical reader misses it: that is what NoLiMa measures.
"""

from __future__ import annotations

import re

from ctxprobe.sim.freeform import read

_MARK = "Use the information provided in the book snippet to answer the question."
_QUESTION = re.compile(r"\n\nQuestion: (.+?)\s*$", re.S)


def nolima_skill(question: str, context: str) -> str | None:
    if not question.strip().startswith("Return only the final") or _MARK not in context:
        return None
    asked = _QUESTION.search(context)
    if asked is None:
        return None
    snippet = context[:asked.start()]
    return read(" ".join(asked.group(1).split()), snippet).answer
