"""Failed cases with the prompt text around their evidence, for the HTML and terminal views.

A failure is only useful to a reader next to what the model was supposed to find: the
needle sentence (located by the text the family stored in ``meta["needle"]``), falling back
to the expected value, and last to the recorded needle token position mapped
proportionally onto the characters. The excerpt is split into segments tagged
``evidence`` / ``distractor`` so each renderer can highlight them in its own way — the
text itself is never interpreted as markup by either.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ctxprobe.core.case_meta import case_meta
from ctxprobe.core.outcome import HARNESS_OUTCOMES, Outcome
from ctxprobe.core.records import CaseRecord

#: (text, kind) with kind None (plain), "evidence" or "distractor".
Segment = tuple[str, "str | None"]

DEFAULT_WINDOW = 320  # characters on each side of the evidence


@dataclass(frozen=True)
class Excerpt:
    label: str  # what the excerpt is centred on, e.g. "target needle"
    located_by: str  # how it was found: "needle text", "expected value", "token position (approx.)"
    segments: list[Segment]
    start: int  # character offset of the excerpt in the prompt text
    prompt_chars: int

    @property
    def end(self) -> int:
        """Character offset just past the excerpt."""
        return self.start + sum(len(text) for text, _ in self.segments)


@dataclass(frozen=True)
class Failure:
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
    output: str | None
    error: str | None
    finish_reason: str | None
    token_count: int
    reported_prompt_tokens: int | None
    excerpts: list[Excerpt] = field(default_factory=list)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The prompt as one string: message contents joined by blank lines (as sims read it)."""
    return "\n\n".join(str(m.get("content") or "") for m in messages)


def _value_spans(text: str, value: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Exact occurrences of ``value`` in text[lo:hi], not glued to other digits/letters."""
    if not value:
        return []
    pattern = re.compile(rf"(?<![0-9A-Za-z]){re.escape(value)}(?![0-9A-Za-z])")
    return [(m.start(), m.end()) for m in pattern.finditer(text, lo, hi)]


def locate_evidence(text: str, rec: CaseRecord) -> tuple[int, int, str] | None:
    """(start, end, located_by) of the target evidence in ``text``, or None."""
    meta = case_meta(rec.meta or {})
    needle = meta.get("needle")
    for candidate in ([needle] if isinstance(needle, str) else list(needle or [])):
        pos = text.find(str(candidate)) if candidate else -1
        if pos >= 0:
            return pos, pos + len(str(candidate)), "needle text"
    question = meta.get("question")
    search_end = text.rfind(question) if isinstance(question, str) and question in text else len(text)
    for value in rec.expected or []:
        spans = _value_spans(text, str(value), 0, search_end)
        if spans:
            return spans[0][0], spans[0][1], "expected value"
    token_pos, count = rec.needle_token_pos, rec.token_count
    if isinstance(token_pos, int) and isinstance(count, int) and count > 0:
        at = min(len(text), max(0, round(token_pos / count * len(text))))
        return at, at, "token position (approx.)"
    return None


def excerpt(text: str, span: tuple[int, int], label: str, located_by: str, *,
            window: int = DEFAULT_WINDOW, distractors: Iterable[str] = (),
            evidence_values: Iterable[str] = ()) -> Excerpt:
    """``window`` characters either side of ``span`` (cut at whitespace), segmented."""
    start, end = span
    lo, hi = max(0, start - window), min(len(text), end + window)
    # cut at a word boundary so the excerpt does not open or close mid-word
    if lo > 0:
        space = text.find(" ", lo, start)
        lo = space + 1 if space >= 0 else lo
    if hi < len(text):
        space = text.rfind(" ", end, hi)
        hi = space if space >= 0 else hi
    marks: list[tuple[int, int, str]] = []
    if end > start:
        marks.append((start, end, "evidence"))
    for value in evidence_values:
        marks += [(a, b, "evidence") for a, b in _value_spans(text, str(value), lo, hi)]
    for value in distractors:
        marks += [(a, b, "distractor") for a, b in _value_spans(text, str(value), lo, hi)]
    segments: list[Segment] = []
    cursor = lo
    for a, b, kind in sorted(marks):
        if a < cursor:  # overlapping mark (a value inside the needle): the outer one wins
            continue
        if a > cursor:
            segments.append((text[cursor:a], None))
        segments.append((text[a:b], kind))
        cursor = b
    if cursor < hi:
        segments.append((text[cursor:hi], None))
    return Excerpt(label, located_by, segments, lo, len(text))


def failure_of(rec: CaseRecord, window: int = DEFAULT_WINDOW) -> Failure:
    """A case record (``Store.iter_case_records``) as a :class:`Failure` with excerpts."""
    text = prompt_text(rec.messages or [])
    expected = [str(v) for v in rec.expected or []]
    distractors = [str(v) for v in rec.distractors or []]
    excerpts: list[Excerpt] = []
    found = locate_evidence(text, rec)
    if found is not None:
        excerpts.append(excerpt(text, found[:2], "target evidence", found[2], window=window,
                                distractors=distractors, evidence_values=expected))
    # For a distractor hit, also show the distractors the model answered with: one excerpt per
    # distinct region (an aggregation list holds them side by side; an excerpt already showing
    # one, highlighted, names it in its label instead of repeating the same text)
    output = rec.output or ""
    answered: dict[int, list[str]] = {}  # excerpt index -> the answered distractors it shows
    for value in distractors:
        if rec.outcome == Outcome.DISTRACTOR and _value_spans(output, value, 0, len(output)):
            spans = _value_spans(text, value, 0, len(text))
            if not spans:
                continue
            shown = next((i for i, ex in enumerate(excerpts) if ex.start <= spans[0][0] and spans[0][1] <= ex.end), None)
            if shown is None:
                shown = len(excerpts)
                excerpts.append(excerpt(text, spans[0], "", "distractor value", window=window,
                                        distractors=distractors, evidence_values=expected))
            answered.setdefault(shown, []).append(value)
    for i, values in answered.items():
        said = f"distractor{'s' if len(values) > 1 else ''} {', '.join(values)} (answered)"
        excerpts[i] = replace(excerpts[i], label=f"{excerpts[i].label}; {said}" if excerpts[i].label else said)
    question = case_meta(rec.meta or {}).get("question")
    return Failure(
        case_id=rec.case_id, family=rec.family, length=int(rec.length or 0),
        depth=float(rec.depth or 0.0), rep=int(rec.rep or 0), outcome=str(rec.outcome),
        score=rec.score, expected=expected, distractors=distractors,
        question=question if isinstance(question, str) else None, output=rec.output,
        error=rec.error, finish_reason=rec.finish_reason,
        token_count=int(rec.token_count or 0), reported_prompt_tokens=rec.reported_prompt_tokens,
        excerpts=excerpts,
    )


def is_failure(rec: CaseRecord, outcome: str | None = None) -> bool:
    """A scored case that is not fully correct (or, with ``outcome``, exactly that label)."""
    got = rec.outcome
    if got is None:  # never answered: nothing to show
        return False
    if outcome is not None:
        return got == outcome
    return got != Outcome.CORRECT


class FailureSampler:
    """Keeps a bounded, evenly spread sample of failures while records stream past.

    Taking the first N would show only the shortest lengths (records come sorted by length);
    instead each (family, length, depth) cell keeps up to ``n`` failures and the sample is
    drawn round-robin across cells, longest lengths first, model failures before harness ones.
    """

    def __init__(self, n: int = 10, outcome: str | None = None, window: int = DEFAULT_WINDOW) -> None:
        self.n, self.outcome, self.window = n, outcome, window
        self.by_cell: dict[tuple[str, int, float], list[Failure]] = defaultdict(list)
        self.total = 0
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, rec: CaseRecord) -> None:
        if not is_failure(rec, self.outcome):
            return
        self.total += 1
        self.counts[str(rec.outcome)] += 1
        bucket = self.by_cell[(rec.family, rec.length, rec.depth)]
        if len(bucket) < self.n:
            bucket.append(failure_of(rec, self.window))

    def sample(self) -> list[Failure]:
        cells = sorted(self.by_cell, key=lambda c: (c[0], -c[1], c[2]))
        queues = {c: sorted(self.by_cell[c], key=lambda f: (f.outcome in HARNESS_OUTCOMES, f.rep)) for c in cells}
        picked: list[Failure] = []
        while len(picked) < self.n and any(queues.values()):
            for cell in cells:
                if queues[cell] and len(picked) < self.n:
                    picked.append(queues[cell].pop(0))
        # shown as drawn: per family, longest lengths first (where long-context failures matter)
        return sorted(picked, key=lambda f: (f.family, -f.length, f.depth, f.rep))
