"""The one mapping of :class:`~ctxprobe.core.records.StoredResponse` and
:class:`~ctxprobe.core.records.CaseRecord` to and from the store's SQLite tables.

The columns are the types' field names (a JSON field's column ends in ``_json``), so a
field added to the type is a column added here and in a migration, nowhere else.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

from ctxprobe.core.records import RESPONSE_FIELDS, CaseRecord, StoredResponse

#: Columns of ``responses`` holding JSON (field ``detail`` is column ``detail_json``).
_JSON_RESPONSE = frozenset({"detail"})
#: The case fields read from ``cases`` (``expected``, ``distractors``, ``meta`` as JSON).
_CASE_COLUMNS: tuple[str, ...] = ("case_id", "family", "length", "depth", "rep", "seed", "prompt_hash",
                                  "token_count", "needle_token_pos", "realised_depth", "expected_json",
                                  "distractors_json", "meta_json", "reasoning_budget")


def _column(name: str) -> str:
    return f"{name}_json" if name in _JSON_RESPONSE else name


_RESPONSE_COLUMNS: tuple[str, ...] = tuple(_column(n) for n in RESPONSE_FIELDS)

_UPSERT = (
    f"INSERT INTO responses (run_id, case_id, created_at, {', '.join(_RESPONSE_COLUMNS)})"
    f" VALUES ({', '.join('?' * (3 + len(_RESPONSE_COLUMNS)))})"
    " ON CONFLICT(run_id, case_id) DO UPDATE SET created_at=excluded.created_at, "
    + ", ".join(f"{c}=excluded.{c}" for c in _RESPONSE_COLUMNS)
    # only an error is ever replaced: a final response is the model's answer as scored
    + " WHERE responses.outcome = 'error'"
)


def write_response(db: sqlite3.Connection, run_id: str, case_id: str, response: StoredResponse, now: str) -> bool:
    """Insert (or replace a stored ``error`` with) ``response``, scrubbed of secrets; return
    False when a final response was already stored and nothing was written."""
    clean = response.scrubbed()
    values: list[Any] = []
    for name in RESPONSE_FIELDS:
        value = getattr(clean, name)
        values.append(json.dumps(value, ensure_ascii=False) if name in _JSON_RESPONSE else value)
    with db:
        cur = db.execute(_UPSERT, (run_id, case_id, now, *values))
    return cur.rowcount > 0


_SELECT = (
    "SELECT " + ", ".join(f"c.{c}" for c in _CASE_COLUMNS) + ", p.messages_json, "
    + ", ".join(f"s.{c}" for c in _RESPONSE_COLUMNS)
    + " FROM cases c JOIN prompts p USING (prompt_hash)"
    " LEFT JOIN responses s ON s.run_id = c.run_id AND s.case_id = c.case_id"
    " WHERE c.run_id=? ORDER BY c.length, c.rep, c.depth"
)


def read_case_records(db: sqlite3.Connection, run_id: str) -> Iterator[CaseRecord]:
    """Every case of a run with its prompt and (if any) response, in length, rep, depth order."""
    n_case = len(_CASE_COLUMNS)
    for row in db.execute(_SELECT, (run_id,)):
        case: dict[str, Any] = {}
        for column, value in zip(_CASE_COLUMNS, row[:n_case]):
            if column.endswith("_json"):
                case[column.removesuffix("_json")] = json.loads(value)
            else:
                case[column] = value
        case["messages"] = json.loads(row[n_case])
        for name, value in zip(RESPONSE_FIELDS, row[n_case + 1:]):
            case[name] = json.loads(value) if name in _JSON_RESPONSE and value else value
        yield CaseRecord(**case)
