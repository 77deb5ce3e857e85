"""Forward-only, named schema migrations, recorded in a table (as simonw/llm does).

Never edit a migration that has shipped: add a new one. Each runs once, in order, inside
a transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.executescript(
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            model TEXT NOT NULL,
            tokenizer TEXT NOT NULL,
            family TEXT NOT NULL,
            ctxprobe_version TEXT NOT NULL,
            spec_json TEXT NOT NULL,
            meta_json TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL DEFAULT 'created'
        );
        -- Content-addressed prompts: a text shared by several runs is stored once.
        CREATE TABLE prompts (
            prompt_hash TEXT PRIMARY KEY,
            messages_json TEXT NOT NULL
        );
        CREATE TABLE cases (
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            case_id TEXT NOT NULL,
            family TEXT NOT NULL,
            length INTEGER NOT NULL,
            depth REAL NOT NULL,
            rep INTEGER NOT NULL,
            seed INTEGER NOT NULL,
            prompt_hash TEXT NOT NULL REFERENCES prompts(prompt_hash),
            token_count INTEGER NOT NULL,
            needle_token_pos INTEGER,
            realised_depth REAL,
            expected_json TEXT NOT NULL,
            distractors_json TEXT NOT NULL,
            meta_json TEXT NOT NULL,
            PRIMARY KEY (run_id, case_id)
        );
        CREATE TABLE responses (
            run_id TEXT NOT NULL,
            case_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            output TEXT,
            finish_reason TEXT,
            reported_prompt_tokens INTEGER,
            completion_tokens INTEGER,
            latency_s REAL,
            attempts INTEGER NOT NULL DEFAULT 1,
            error TEXT,
            score REAL,
            outcome TEXT NOT NULL,
            detail_json TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (run_id, case_id),
            FOREIGN KEY (run_id, case_id) REFERENCES cases(run_id, case_id)
        );
        CREATE INDEX responses_outcome ON responses(run_id, outcome);
        """
    )


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply pending migrations; return the names applied."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {r[0] for r in db.execute("SELECT name FROM _migrations")}
    applied = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        with db:
            fn(db)
            db.execute("INSERT INTO _migrations VALUES (?, datetime('now'))", (name,))
        # (m001 uses executescript, which commits on its own; later migrations use
        # execute and are atomic with their _migrations row)
        applied.append(name)
    return applied


@migration
def m002_reasoning_and_cost(db: sqlite3.Connection) -> None:
    """Reasoning text is stored apart from the scored answer; spend is tracked per response."""
    db.execute("ALTER TABLE responses ADD COLUMN reasoning TEXT")
    db.execute("ALTER TABLE responses ADD COLUMN cost_usd REAL")


@migration
def m003_cached_prompt_tokens(db: sqlite3.Connection) -> None:
    """Prompt tokens the server reported serving from its prefix cache (NULL: not reported)."""
    db.execute("ALTER TABLE responses ADD COLUMN cached_prompt_tokens INTEGER")
