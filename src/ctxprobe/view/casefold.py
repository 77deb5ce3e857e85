"""A case's whole prompt, folded around its evidence: the needle, the distractors and the
question marked, long stretches of filler folded away (still on the page, one click
open). The evidence is found as the report finds it
(:func:`ctxprobe.report.evidence.locate_evidence`); segments are plain text with a kind,
escaped by the template, never parsed as markup."""

from __future__ import annotations

import json
from dataclasses import dataclass
from ctxprobe.core.case_meta import case_meta
from ctxprobe.core.records import CaseRecord
from ctxprobe.report.evidence import excerpt, locate_evidence, prompt_text
from ctxprobe.report.redact import redact

#: Characters of filler kept open on each side of a mark; longer stretches are folded.
KEEP = 240


@dataclass(frozen=True)
class Piece:
    text: str
    kind: str  # "" plain, "evidence", "distractor", "question", "fold" (folded filler)


@dataclass(frozen=True)
class CaseView:
    case_id: str
    family: str
    length: int
    depth: float
    rep: int
    outcome: str
    score: float | None
    expected: list[str]
    distractors: list[str]
    question: str | None
    located_by: str
    pieces: list[Piece]
    output: str | None
    reasoning: str | None
    error: str | None
    finish_reason: str | None
    why: list[tuple[str, str]]  # (what, value): the scorer's stored detail, and what the output holds
    tokens_built: int
    tokens_received: int | None
    completion_tokens: int | None
    latency_s: float | None
    attempts: int | None


def _marks(pieces: list[Piece], value: str, kind: str) -> list[Piece]:
    """``value``'s last occurrence inside plain pieces marked as ``kind``."""
    if not value:
        return pieces
    for i in range(len(pieces) - 1, -1, -1):
        p = pieces[i]
        at = p.text.rfind(value) if p.kind == "" else -1
        if at >= 0:
            parts = [Piece(p.text[:at], ""), Piece(value, kind), Piece(p.text[at + len(value):], "")]
            return pieces[:i] + [q for q in parts if q.text] + pieces[i + 1:]
    return pieces


def _fold(pieces: list[Piece], keep: int) -> list[Piece]:
    """Plain stretches longer than ``2 × keep`` (and a little) keep their ends open and fold the middle."""
    out: list[Piece] = []
    for p in pieces:
        if p.kind or len(p.text) <= 2 * keep + 80:
            out.append(p)
            continue
        a = p.text.find(" ", keep)  # cut between words, not inside one
        b = p.text.rfind(" ", 0, len(p.text) - keep)
        a, b = (a + 1, b + 1) if 0 <= a < b else (keep, len(p.text) - keep)
        out += [Piece(p.text[:a], ""), Piece(p.text[a:b], "fold"), Piece(p.text[b:], "")]
    return out


def case_view(rec: CaseRecord, keep: int = KEEP) -> CaseView:
    """One stored case record as the case page shows it."""
    text = prompt_text(rec.messages or [])
    expected = [str(v) for v in rec.expected or []]
    distractors = [str(v) for v in rec.distractors or []]
    meta = case_meta(rec.meta or {})
    question = meta.get("question") if isinstance(meta.get("question"), str) else None
    found = locate_evidence(text, rec)
    if found is not None:
        ex = excerpt(text, found[:2], "target evidence", found[2], window=len(text), distractors=distractors,
                     evidence_values=expected)
        pieces = [Piece(t, k or "") for t, k in ex.segments]
        located = found[2]
    else:
        pieces, located = [Piece(text, "")], "not located"
    if question:
        pieces = _marks(pieces, question, "question")
    pieces = _fold([p for p in pieces if p.text], keep)
    output = rec.output
    why: list[tuple[str, str]] = []
    detail = rec.detail or {}
    for k, v in sorted(detail.items()) if isinstance(detail, dict) else []:
        why.append((f"scorer: {k}", v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)))
    if output is not None:
        hits = [v for v in expected if v and v in output]
        looks = [v for v in distractors if v and v in output]
        why.append(("expected value(s) in the output", ", ".join(hits) or "none"))
        if distractors:
            why.append(("look-alike (distractor) value(s) in the output", ", ".join(looks) or "none"))
    error = rec.error
    return CaseView(rec.case_id, rec.family, rec.length, rec.depth, rec.rep or 0, rec.outcome or "unanswered",
                    rec.score, expected, distractors, question, located, pieces, output, rec.reasoning,
                    redact(error) if error else None, rec.finish_reason, why, rec.token_count or 0,
                    rec.reported_prompt_tokens, rec.completion_tokens, rec.latency_s, rec.attempts)
