"""A stored response and a stored case with its response: the one place their fields are named.

Every writer builds a :class:`StoredResponse` (the sweep's recorder, batches, the judge,
imports of other harnesses' logs) and hands it to ``Store.save_response``, the one write
path, which scrubs secrets from it (:meth:`StoredResponse.scrubbed`) before it reaches the
file. Every reader gets a :class:`CaseRecord` from ``Store.iter_case_records``: the case as
built and stored, its prompt, and the response's fields (all None when no response is
stored yet). ``ctxprobe.store.records`` is the one place these map to and from SQLite.

The export's JSON line for a case is :meth:`CaseRecord.to_json`, read back by
:meth:`CaseRecord.from_json`. For code written against the older dict records (plugin
families' report hooks read them as ``Mapping[str, Any]``), a record is also a read-only
mapping of exactly those keys: ``rec["outcome"]`` is ``rec.outcome``. New code reads attributes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ctxprobe.core.case import Case, Cell, sample_of_id
from ctxprobe.core.case_meta import case_meta
from ctxprobe.redaction import scrub, scrub_obj


@dataclass(frozen=True)
class StoredResponse:
    """A model's reply to one case as stored: what came back, what it cost, how it scored."""

    output: str | None
    finish_reason: str | None
    reported_prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    attempts: int
    error: str | None
    score: float | None
    outcome: str  # one of ctxprobe.core.outcome.OUTCOMES
    detail: dict[str, Any]
    reasoning: str | None = None
    cost_usd: float | None = None
    cached_prompt_tokens: int | None = None
    #: Reasoning tokens the response was billed for (None: not reported).
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None

    def scrubbed(self) -> StoredResponse:
        """The response with every API key (whole, fragments, masked forms) removed from
        its text fields and its detail: what the store writes."""
        return dataclasses.replace(
            self, output=scrub(self.output) if self.output else self.output,
            error=scrub(self.error) if self.error else self.error,
            reasoning=scrub(self.reasoning) if self.reasoning else self.reasoning,
            detail=scrub_obj(self.detail))


#: The response's fields, in the order the store's columns and the export list them.
RESPONSE_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(StoredResponse))


@dataclass(frozen=True, eq=False)
class CaseRecord(Mapping[str, Any]):
    """One stored case of a run, its prompt, and its response's fields (None: no response yet)."""

    case_id: str
    family: str
    length: int
    depth: float
    rep: int
    seed: int
    prompt_hash: str
    token_count: int
    needle_token_pos: int | None
    realised_depth: float | None
    expected: list[str]
    distractors: list[str]
    meta: dict[str, Any]
    messages: list[dict[str, str]]
    #: The case's reasoning budget; None: the run has no budget axis.
    reasoning_budget: int | None = None
    output: str | None = None
    finish_reason: str | None = None
    reported_prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    attempts: int | None = None
    error: str | None = None
    score: float | None = None
    outcome: str | None = None
    detail: dict[str, Any] | None = None
    reasoning: str | None = None
    cost_usd: float | None = None
    cached_prompt_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None

    @property
    def response(self) -> StoredResponse | None:
        """The stored response, or None when the case has none yet."""
        if self.outcome is None:
            return None
        values = {name: getattr(self, name) for name in RESPONSE_FIELDS}
        values["attempts"] = self.attempts or 0
        values["detail"] = self.detail or {}
        return StoredResponse(**values)

    def to_case(self) -> Case:
        """The case as it was built and sent (its cell, sample, messages and answer key; a
        family that fixes its output budget, RULER's ``tokens_to_generate``, keeps it)."""
        meta = dict(self.meta or {})
        return Case(Cell(self.family, int(self.length), float(self.depth), self.reasoning_budget), int(self.rep),
                    int(self.seed), list(self.messages), [str(v) for v in self.expected or []],
                    [str(v) for v in self.distractors or []], meta, int(self.token_count),
                    self.needle_token_pos, self.realised_depth, max_tokens=case_meta(meta).get("tokens_to_generate"),
                    sample=sample_of_id(self.case_id))

    def without_prompt(self) -> CaseRecord:
        """The record with its messages dropped (what a reader that never reads prompts holds)."""
        return dataclasses.replace(self, messages=[])

    # the export's JSON line ---------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The export's line for this case: every field, the budget axis's two only in runs
        that have it (so exports of other runs are unchanged)."""
        return {key: getattr(self, key) for key in self}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CaseRecord:
        """A record from an export line (or any mapping of its keys; others are ignored)."""
        if isinstance(doc, CaseRecord):
            return doc
        values: dict[str, Any] = {name: doc.get(name) for name in _FIELDS if name in doc or name not in _REQUIRED}
        return cls(**values)

    # the older dict records' read-only view ------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        if key not in _FIELD_SET or (key in _BUDGET_ONLY and self.reasoning_budget is None):
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        budget = self.reasoning_budget is not None
        return iter(_EXPORT_ORDER if budget else _EXPORT_ORDER_NO_BUDGET)

    def __len__(self) -> int:
        return len(_EXPORT_ORDER if self.reasoning_budget is not None else _EXPORT_ORDER_NO_BUDGET)


_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(CaseRecord))
_FIELD_SET = frozenset(_FIELDS)
_REQUIRED = frozenset(f.name for f in dataclasses.fields(CaseRecord) if f.default is dataclasses.MISSING)
#: Keys an export line carries only when the run has a reasoning-budget axis.
_BUDGET_ONLY = frozenset({"reasoning_budget", "reasoning_tokens"})
#: The export's key order (the case, its prompt, the response; the budget axis last).
_EXPORT_ORDER: tuple[str, ...] = (
    *(n for n in _FIELDS if n not in _BUDGET_ONLY and n not in RESPONSE_FIELDS),
    *(n for n in RESPONSE_FIELDS if n not in _BUDGET_ONLY), "reasoning_budget", "reasoning_tokens")
_EXPORT_ORDER_NO_BUDGET: tuple[str, ...] = tuple(n for n in _EXPORT_ORDER if n not in _BUDGET_ONLY)
