"""Forward-only, named schema migrations, recorded in a table (as simonw/llm does).

Never edit a migration that has shipped: add a new one. Each runs once, in order, inside
a transaction.

Several processes may open one store at the same moment (two sweeps of one spec): the
whole check-and-apply happens under one write lock (``BEGIN IMMEDIATE``), so each
migration is applied exactly once and the others wait, then find it recorded.
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
    _script(
        db,
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
        """,
    )


def _script(db: sqlite3.Connection, sql: str) -> None:
    """Run a migration's statements one by one inside the caller's transaction.

    (``executescript`` would commit first and release the lock other processes wait on;
    the statements and the resulting schema are unchanged.)"""
    statement = ""
    for line in sql.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip() and not statement.strip().startswith("--"):
        db.execute(statement)


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply pending migrations; return the names applied.

    Checked and applied under one write lock, so concurrent openers never apply a
    migration twice; an up-to-date store takes no write lock at all."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    db.commit()
    if not _pending(db):
        return []
    applied = []
    db.execute("BEGIN IMMEDIATE")
    try:
        for name, fn in _pending(db):  # re-read under the lock: another process may have applied some
            fn(db)
            db.execute("INSERT INTO _migrations VALUES (?, datetime('now'))", (name,))
            applied.append(name)
        db.commit()
    except BaseException:
        db.rollback()
        raise
    return applied


def unapplied(db: sqlite3.Connection) -> list[str]:
    """The migrations a store lacks, read without writing (a store with no migration
    table at all is not a ctxprobe store: every migration is missing)."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='_migrations'").fetchone() is None:
        return [name for name, _ in MIGRATIONS]
    return [name for name, _ in _pending(db)]


def _pending(db: sqlite3.Connection) -> list[tuple[str, Migration]]:
    done = {r[0] for r in db.execute("SELECT name FROM _migrations")}
    return [(name, fn) for name, fn in MIGRATIONS if name not in done]


@migration
def m002_reasoning_and_cost(db: sqlite3.Connection) -> None:
    """Reasoning text is stored apart from the scored answer; spend is tracked per response."""
    db.execute("ALTER TABLE responses ADD COLUMN reasoning TEXT")
    db.execute("ALTER TABLE responses ADD COLUMN cost_usd REAL")


@migration
def m003_cached_prompt_tokens(db: sqlite3.Connection) -> None:
    """Prompt tokens the server reported serving from its prefix cache (NULL: not reported)."""
    db.execute("ALTER TABLE responses ADD COLUMN cached_prompt_tokens INTEGER")


@migration
def m004_claims_and_sessions(db: sqlite3.Connection) -> None:
    """Coordination of processes sharing a store: each sweep process is a session with a
    lease it renews; a case is claimed by one session before it is sent. A claim lives as
    long as its session (a dead session's claims can be taken over); ``settled`` marks a
    claim whose response was stored."""
    db.execute(
        "CREATE TABLE sessions (session_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, host TEXT NOT NULL,"
        " pid INTEGER NOT NULL, started_at REAL NOT NULL, lease_until REAL NOT NULL, ended_at REAL)")
    db.execute("CREATE INDEX sessions_run ON sessions(run_id)")
    db.execute(
        "CREATE TABLE claims (run_id TEXT NOT NULL, case_id TEXT NOT NULL, session_id TEXT NOT NULL,"
        " claimed_at REAL NOT NULL, settled INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run_id, case_id))")
    db.execute("CREATE INDEX claims_session ON claims(session_id)")


@migration
def m005_batches(db: sqlite3.Connection) -> None:
    """Provider batches a run submitted (``run --batch``): recorded before the provider is
    asked to create one (``state`` submitting), given its id the moment it exists
    (submitted), then collected or abandoned. ``case_ids_json`` lists the run's cases in
    request order (request i's custom id is ``r{i}``); ``provider_status`` is the provider's
    own word from the last poll."""
    db.execute(
        "CREATE TABLE batches (run_id TEXT NOT NULL, batch_key TEXT NOT NULL, provider TEXT NOT NULL,"
        " batch_id TEXT, state TEXT NOT NULL, provider_status TEXT, round INTEGER NOT NULL DEFAULT 1,"
        " case_ids_json TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
        " PRIMARY KEY (run_id, batch_key))")
    db.execute("CREATE INDEX batches_state ON batches(run_id, state)")


@migration
def m006_reasoning_budget(db: sqlite3.Connection) -> None:
    """The reasoning budget a case was sent with (NULL: the run has no budget axis) and the
    reasoning tokens a response was billed for (NULL: the provider did not say)."""
    db.execute("ALTER TABLE cases ADD COLUMN reasoning_budget INTEGER")
    db.execute("ALTER TABLE responses ADD COLUMN reasoning_tokens INTEGER")


@migration
def m007_cache_write_tokens(db: sqlite3.Connection) -> None:
    """Prompt tokens the provider reported writing to its prompt cache (Anthropic's
    ``cache_creation_input_tokens``, a Gemini explicit cache created for the request);
    NULL: not reported. Billed at their own price, apart from cached reads."""
    db.execute("ALTER TABLE responses ADD COLUMN cache_write_tokens INTEGER")


@migration
def m008_rag_confirmations(db: sqlite3.Connection) -> None:
    """``decide --rag --confirm`` results, one row per confirmed setting, never replaced (a
    later confirmation of the same setting is a new row; readers show the latest). The
    setting is named by its columns (the use, chunk size, k, order and where the chunks came
    from); ``result_json`` holds the verdict and the paired drops as ``decide --json``
    prints them, ``scores_json`` each arm's per-case scores (paired by index)."""
    db.execute(
        "CREATE TABLE rag_confirmations (confirm_id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " run_id TEXT NOT NULL REFERENCES runs(run_id), confirmed_at TEXT NOT NULL, model TEXT NOT NULL,"
        " use TEXT NOT NULL, chunk_tokens INTEGER NOT NULL, chunk_size INTEGER NOT NULL, k INTEGER NOT NULL,"
        " order_kind TEXT NOT NULL, first_edge TEXT, source TEXT NOT NULL, bar REAL NOT NULL,"
        " held INTEGER NOT NULL, result_json TEXT NOT NULL, scores_json TEXT NOT NULL)")
    db.execute("CREATE INDEX rag_confirmations_run ON rag_confirmations(run_id)")
