"""Key → value lookup (``niah`` and its variants): find each asked key's stated values."""

from __future__ import annotations

from ctxprobe.sim.reader import NIAH_READER


def niah_skill(question: str, context: str) -> str | None:
    keys = NIAH_READER.keys_in(question)
    if not keys:
        return None
    values: list[str] = []
    for key in keys:
        values.extend(v for v in NIAH_READER.values_for(key, context) if v not in values)
    return ", ".join(values) if values else ""
