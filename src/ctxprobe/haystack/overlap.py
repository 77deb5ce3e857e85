"""Lexical overlap between a question and the evidence that answers it.

Why: a model can "retrieve" by string matching when the question repeats the words of the
evidence (NoLiMa's finding: scores fall sharply once that overlap is removed). ctxprobe
records the overlap of every case, per evidence sentence, so a profile can be read
knowing how much of it is literal matching.

Definitions (deliberately simple and reproducible from an exported case):

- *content words* of a text: its lowercase alphabetic tokens (``[a-z]+`` after
  lowercasing; digits, punctuation and apostrophes split tokens, so ``Vesk's`` gives
  ``vesk`` and ``s``) minus :data:`STOPWORDS` (which includes single letters);
- *overlap* of a question with one evidence sentence:
  ``|question ∩ evidence| / |question content words|`` (0 when the question has none),
  together with the shared words themselves.

No stemming: ``works`` and ``workplace`` are different words. Families that promise zero
overlap (``multihop``) also keep their templates free of shared stems by construction.

Other families record overlap with one line::

    meta["overlap"] = evidence_overlap(question, [needle_sentence, ...])
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    either else ever every few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just let me might more most
    much must my myself neither no nor not now of off on once only or other ought our ours
    ourselves out over own per same shall she should so some such than that the their
    theirs them themselves then there these they this those through thus to too under until
    up upon very was we were what when where whether which while who whom whose why will
    with within without would yet you your yours yourself yourselves""".split()
) | frozenset("abcdefghijklmnopqrstuvwxyz")

_WORD = re.compile(r"[a-z]+")


def content_words(text: str) -> set[str]:
    """Lowercase alphabetic tokens of ``text`` that are not stopwords."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


@dataclass(frozen=True)
class Overlap:
    ratio: float  # |question ∩ evidence| / |question content words|
    shared: tuple[str, ...]  # the shared content words, sorted
    question_words: int  # |question content words|


def overlap(question: str, evidence: str) -> Overlap:
    """Content-word overlap of ``question`` with one ``evidence`` text."""
    q = content_words(question)
    shared = tuple(sorted(q & content_words(evidence)))
    return Overlap(len(shared) / len(q) if q else 0.0, shared, len(q))


def evidence_overlap(question: str, evidence: Sequence[str] | Mapping[str, str]) -> list[dict[str, Any]]:
    """Per-evidence-sentence overlap, ready to store as ``meta["overlap"]``.

    ``evidence`` is a list of sentences, or a mapping role → sentence (e.g.
    ``{"first_hop": ..., "second_hop": ...}``) whose roles are kept in the rows.
    """
    items = list(evidence.items()) if isinstance(evidence, Mapping) else [(None, s) for s in evidence]
    rows: list[dict[str, Any]] = []
    for role, sentence in items:
        o = overlap(question, sentence)
        row: dict[str, Any] = {"sentence": sentence, "overlap": round(o.ratio, 6), "shared": list(o.shared)}
        if role is not None:
            row = {"role": role, **row}
        rows.append(row)
    return rows


def max_overlap(rows: Sequence[Mapping[str, Any]]) -> float:
    """The largest overlap among stored rows (0.0 for none): one number per case for reports."""
    return max((float(r["overlap"]) for r in rows), default=0.0)
