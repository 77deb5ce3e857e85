"""The prompts ``draft-questions`` sends and how their replies are read.

Three kinds of call, each one user message:

- *draft*: a passage of a document between ``<<<`` and ``>>>`` and the request for up to K
  pairs, one JSON object a line: ``{"question", "answer", "evidence"}``;
- *closed book*: the ``documents`` family's question paragraph alone (no document), the
  no-context baseline a drafted question must fail;
- *all answers*: the whole document, then the question and ``List every answer the
  document gives, one per line.``: the second pass that finds ambiguous questions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ctxprobe.haystack.documents import QUESTION

DRAFT_REQUEST = (
    "Write up to {k} question-answer pairs about facts stated in the passage above. Each answer must be a "
    "short span copied from the passage; each question must be answerable from the passage alone and should "
    "not repeat the passage's wording. Write one pair per line as JSON: "
    '{{"question": "...", "answer": "...", "evidence": "<the sentence that states the answer>"}}')
ALL_ANSWERS = "Question: {question} List every answer the document gives, one per line."
NONE_REPLY = "NONE"


def draft_prompt(document: str, passage: str, k: int) -> list[dict[str, str]]:
    body = f'Passage from the document "{document}":\n<<<\n{passage}\n>>>\n\n{DRAFT_REQUEST.format(k=k)}'
    return [{"role": "user", "content": body}]


def closed_book_prompt(question: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": QUESTION.format(question=question)}]


def all_answers_prompt(document: str, text: str, question: str) -> list[dict[str, str]]:
    body = f'Document "{document}":\n<<<\n{text}\n>>>\n\n{ALL_ANSWERS.format(question=question)}'
    return [{"role": "user", "content": body}]


@dataclass(frozen=True)
class Draft:
    question: str
    answer: str
    evidence: str


def parse_pairs(reply: str) -> tuple[list[Draft], int]:
    """The pairs of a draft reply and the number of lines that were not a pair (kept
    out: a line that is not JSON, or lacks a non-empty question, answer or evidence)."""
    pairs: list[Draft] = []
    bad = 0
    for line in reply.splitlines():
        line = line.strip().strip(",")
        if not line or line == NONE_REPLY or line.startswith("```"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(obj, dict) or not all(isinstance(obj.get(k), str) and obj[k].strip()
                                                for k in ("question", "answer", "evidence")):
            bad += 1
            continue
        pairs.append(Draft(" ".join(obj["question"].split()), obj["answer"].strip(), " ".join(obj["evidence"].split())))
    return pairs, bad


def answer_lines(reply: str) -> list[str]:
    """The distinct non-empty lines of an all-answers reply, bullets stripped."""
    seen: dict[str, None] = {}
    for line in reply.splitlines():
        text = line.strip().lstrip("-*• ").strip()
        if text and text != NONE_REPLY:
            seen.setdefault(text, None)
    return list(seen)
