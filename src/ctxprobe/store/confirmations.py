"""Stored ``decide --rag --confirm`` results (table ``rag_confirmations``, migration m008).

Rows are plain mappings here: the store knows the setting's key columns and keeps the
verdict as the JSON ``decide`` made (``ctxprobe.decide.rag_confirm``); it computes nothing.
Every confirmation is a new row; :func:`latest_confirmations` keeps, per setting, the
latest one (nothing is deleted).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

__all__ = ["SETTING_KEY", "latest_confirmations", "read_confirmations", "save_confirmation"]

#: The columns naming a confirmed setting: two rows with the same values confirmed the same cases.
SETTING_KEY = ("use", "chunk_tokens", "k", "order_kind", "first_edge", "source")
_COLUMNS = ("confirm_id", "run_id", "confirmed_at", "model", "use", "chunk_tokens", "chunk_size", "k", "order_kind",
            "first_edge", "source", "bar", "held", "result_json", "scores_json")


def save_confirmation(db: sqlite3.Connection, row: Mapping[str, Any]) -> dict[str, Any]:
    """Store one confirmation (``row``: the key columns, ``run_id``, ``model``,
    ``chunk_size``, ``bar``, ``held``, ``result`` and ``scores``); return it as read back."""
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    with db:
        cur = db.execute(
            "INSERT INTO rag_confirmations (run_id, confirmed_at, model, use, chunk_tokens, chunk_size, k, order_kind,"
            " first_edge, source, bar, held, result_json, scores_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (row["run_id"], now, row["model"], row["use"], int(row["chunk_tokens"]), int(row["chunk_size"]),
             int(row["k"]), row["order_kind"], row["first_edge"], row["source"], float(row["bar"]),
             1 if row["held"] else 0, json.dumps(row["result"]), json.dumps(row["scores"])))
    found = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM rag_confirmations WHERE confirm_id=?",
                       (cur.lastrowid,)).fetchone()
    return _row(found)


def read_confirmations(db: sqlite3.Connection, run_id: str) -> list[dict[str, Any]]:
    """Every stored confirmation of ``run_id``, oldest first."""
    rows = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM rag_confirmations WHERE run_id=?"
                      " ORDER BY confirm_id", (run_id,))
    return [_row(r) for r in rows]


def latest_confirmations(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of ``rows`` (oldest first), the latest per setting (:data:`SETTING_KEY`), in the order
    of each setting's first confirmation."""
    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        latest[tuple(r[c] for c in SETTING_KEY)] = r
    return list(latest.values())


def _row(r: tuple[Any, ...]) -> dict[str, Any]:
    d = dict(zip(_COLUMNS, r))
    d["held"] = bool(d["held"])
    d["result"] = json.loads(d.pop("result_json"))
    d["scores"] = json.loads(d.pop("scores_json"))
    return d
