"""The checks a drafted pair must pass before it is kept (pure functions, no calls).

A pair is kept only when every check passes; otherwise it is rejected with every reason
that applies (``qa.rejected.jsonl``):

- ``answer_absent``: the answer (normalised as the ``documents`` family scores: lowercase,
  no punctuation or articles, whole words) does not occur in the document;
- ``answer_repeated``: it occurs more than once (the occurrences are listed: character
  offset and sentence), so a reply could be right by quoting the wrong place;
- ``closed_book``: a closed-book run (the question alone, no document) of the drafting
  model, or of the second model when one is named, answers it (the ``documents``
  contains rule): the question tests what the model knew, not what it read;
- ``overlap``: the question's lexical overlap with its evidence
  (:func:`ctxprobe.haystack.overlap.overlap`: the share of the question's content words
  found in the evidence sentence) is above ``max_overlap`` (default 0.5): it can be
  answered by string matching. The evidence is the drafted one when the document holds it
  (whitespace aside); otherwise (a drafter that paraphrased its evidence) the largest
  overlap with any document sentence holding the answer;
- ``ambiguous``: the second pass (the model given the whole document, asked for every
  answer it gives to the question, one per line) does not return exactly one answer
  that contains the drafted one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxprobe.haystack.sanitize import split_sentences
from ctxprobe.scores.answers import contains_answer, normalize_answer
from ctxprobe.haystack.overlap import overlap

DEFAULT_MAX_OVERLAP = 0.5
REASONS = ("answer_absent", "answer_repeated", "closed_book", "overlap", "ambiguous")


@dataclass
class Verdict:
    reasons: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return not self.reasons


def occurrences(answer: str, document: str) -> list[dict[str, Any]]:
    """Each whole-word occurrence of the normalised answer in the document: the sentence
    holding it and that sentence's character offset, in document order."""
    want = normalize_answer(answer)
    found: list[dict[str, Any]] = []
    at = 0
    for line in document.split("\n"):
        for sentence in split_sentences(line):
            offset = document.find(sentence, at)
            norm = f" {normalize_answer(sentence)} "
            k = norm.count(f" {want} ") if want else 0
            for _ in range(k):
                found.append({"offset": max(offset, 0), "sentence": sentence})
            if offset >= 0:
                at = offset
    return found


def document_checks(question: str, answer: str, evidence: str, document: str,
                    max_overlap: float = DEFAULT_MAX_OVERLAP) -> Verdict:
    """The checks that need no model: presence, uniqueness, overlap."""
    v = Verdict()
    occ = occurrences(answer, document)
    v.detail["occurrences"] = occ
    if not occ:
        v.reasons.append("answer_absent")
    elif len(occ) > 1:
        v.reasons.append("answer_repeated")
    quoted = " ".join(evidence.split()) in " ".join(document.split())
    v.detail["evidence_in_document"] = quoted
    against = [evidence] if quoted or not occ else [o["sentence"] for o in occ]
    worst = max((overlap(question, text) for text in against), key=lambda o: o.ratio)
    v.detail["overlap"] = round(worst.ratio, 6)
    v.detail["overlap_shared"] = list(worst.shared)
    v.detail["overlap_against"] = "evidence" if quoted or not occ else "answer sentences"
    if worst.ratio > max_overlap:
        v.reasons.append("overlap")
    return v


def closed_book_check(v: Verdict, answer: str, replies: dict[str, str]) -> None:
    """``replies``: model name → its closed-book reply."""
    v.detail["closed_book"] = {m: r[:200] for m, r in replies.items()}
    if any(contains_answer(r, answer) for r in replies.values()):
        v.reasons.append("closed_book")


def ambiguity_check(v: Verdict, answer: str, lines: list[str]) -> None:
    v.detail["answers_given"] = lines[:10]
    if len(lines) != 1 or not contains_answer(lines[0], answer):
        v.reasons.append("ambiguous")
