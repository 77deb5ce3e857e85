"""Typed case records for unit tests that state only the fields a reader looks at: the
rest take a neutral value, so a test reads as the fields it is about."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxprobe.core.records import CaseRecord

_BLANK: dict[str, Any] = {
    "case_id": "stub", "family": "niah", "length": 0, "depth": 0.0, "rep": 0, "seed": 0, "prompt_hash": "",
    "token_count": 0, "needle_token_pos": None, "realised_depth": None, "expected": [], "distractors": [],
    "meta": {}, "messages": [],
}


def stub_record(fields: Mapping[str, Any]) -> CaseRecord:
    """A record of ``fields`` (the names :class:`CaseRecord` has), the others neutral."""
    return CaseRecord.from_json({**_BLANK, **fields})


def stub_records(records: Iterable[Mapping[str, Any]]) -> list[CaseRecord]:
    return [stub_record(r) for r in records]
