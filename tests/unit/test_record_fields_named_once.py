"""A stored case's fields are named in one module, ``core/records.py`` (mapped to and from
SQLite in ``store/records.py``): every other module reads a record's attributes
(``rec.outcome``), never a string key (``rec["outcome"]``, ``rec.get("outcome")``), so a
renamed or retyped field is found by the type checker, not at run time. The record's
read-only mapping view stays for plugins written against the older dict records."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ctxprobe.core.records import CaseRecord

SRC = Path(__file__).resolve().parents[2] / "src" / "ctxprobe"
#: Where the fields are named: the record types and their SQLite mapping.
NAMING = {SRC / "core" / "records.py", SRC / "store" / "records.py"}
FIELDS = "|".join(f.name for f in dataclasses.fields(CaseRecord))
#: A record read by string key, under the names records go by in this code.
BY_KEY = re.compile(rf'\b(?:rec|record|records\[\w+\]|recs\[\w+\])\s*(?:\[\s*"({FIELDS})"\s*\]|\.get\(\s*"({FIELDS})")')


def test_no_module_reads_a_record_by_string_key() -> None:
    found = [f"{p.relative_to(SRC)}:{n}: {line.strip()}"
             for p in sorted(SRC.rglob("*.py")) if p not in NAMING
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if BY_KEY.search(line)]
    assert not found, "records read by string key (read the attribute):\n" + "\n".join(found)


def test_the_check_sees_a_string_key_read() -> None:
    assert BY_KEY.search('    if rec.get("outcome") is None:') and BY_KEY.search('x = record["meta"]["needles"]')
    assert not BY_KEY.search("if rec.outcome is None:") and not BY_KEY.search('item["outcome"]')
