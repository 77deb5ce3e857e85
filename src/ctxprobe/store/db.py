"""The SQLite store: runs, content-addressed prompts, cases and responses.

Every response is committed the moment it arrives (WAL mode), so a killed run loses
nothing and a rerun of the same spec skips what is already stored.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ctxprobe.core.rows import ResultRow
from ctxprobe.errors import CtxprobeError
from ctxprobe.redaction import scrub_obj
from ctxprobe.store.batches import batch_summary
from ctxprobe.store.claims import live_sessions
from ctxprobe.store.confirmations import read_confirmations, save_confirmation
from ctxprobe.store.migrations import migrate, unapplied
from ctxprobe.store.records import read_case_records, write_response
from ctxprobe.core.records import CaseRecord, StoredResponse
from ctxprobe.core.runmeta import RunMeta
from ctxprobe.core.case import Case, sample_of_id

DEFAULT_STORE = "ctxprobe.sqlite"

#: Set by :func:`reading_only`: every store opened meanwhile (by any reader) is read-only.
_READ_ONLY: ContextVar[bool] = ContextVar("ctxprobe_store_read_only", default=False)


@contextmanager
def reading_only() -> Iterator[None]:
    """Every :class:`Store` opened inside (the report's loaders included) is opened
    read-only (``mode=ro``: never created, migrated or written; WAL lets it read while a
    sweep writes); a store whose schema is not this version's is refused in one line."""
    token = _READ_ONLY.set(True)
    try:
        yield
    finally:
        _READ_ONLY.reset(token)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    created_at: str
    updated_at: str
    model: str
    tokenizer: str
    family: str
    ctxprobe_version: str
    spec: dict[str, Any]
    meta: RunMeta
    status: str
    n_cases: int = 0  # cases built and stored
    n_responses: int = 0  # responses stored, `error` ones included
    n_planned: int = 0  # cases the run plans (meta.planned_cases; the built ones for older runs)
    n_final: int = 0  # responses with a final outcome (not `error`)
    #: With --batch: the provider's status of the batches still waiting ("in_progress"), else None.
    batch: str | None = None


def _refuse_foreign(db: sqlite3.Connection, path: Path) -> None:
    """Refuse, untouched, a SQLite file of another program: tables but no ctxprobe migrations
    table (a new store creates that table first, so a store mid-creation is never refused)."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    if tables and "_migrations" not in tables:
        db.close()
        raise CtxprobeError(f"{path} is no ctxprobe store (a SQLite file with other tables: "
                            f"{', '.join(sorted(tables)[:5])}); it is left as is: pass --store with the file a "
                            "sweep wrote, or a new path")


def _meta(meta: RunMeta | Mapping[str, Any]) -> RunMeta:
    return meta if isinstance(meta, RunMeta) else RunMeta.from_json(meta)


class Store:
    def __init__(self, path: str | Path = DEFAULT_STORE) -> None:
        self.path = Path(path)
        if _READ_ONLY.get():
            self._open_read_only()
            return
        if not self.path.parent.is_dir():
            raise CtxprobeError(f"cannot create store {self.path}: its folder {self.path.parent} does not exist; "
                                "create it, or pass --store with a path in an existing folder")
        try:
            if self.path.exists() and not self.path.is_file():
                raise sqlite3.OperationalError("not a file")
            self.db = sqlite3.connect(self.path, timeout=30)
            _refuse_foreign(self.db, self.path)  # before WAL mode or a migration touches the file
            self.db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a killed process loses nothing committed; only a power cut can
            # drop the last transactions. Per-response commits cost ~2x less than FULL.
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            migrate(self.db)
        except sqlite3.DatabaseError as err:
            raise CtxprobeError(
                f"cannot open store {self.path}: {err} (the file is left as is); pass --store with a ctxprobe "
                "store, or a new path for a new one"
            ) from None

    def _open_read_only(self) -> None:
        where = self.path
        try:
            if not where.is_file():
                raise CtxprobeError(f"no store at {where}; run a sweep first or pass --store PATH")
            self.db = sqlite3.connect(f"{where.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
            self.db.execute("PRAGMA query_only=ON")
            missing = unapplied(self.db)
        except sqlite3.DatabaseError as err:
            raise CtxprobeError(f"cannot read store {where}: {err}; pass --store with a readable ctxprobe "
                                "SQLite file") from None
        if missing and not self.db.execute("SELECT 1 FROM sqlite_master WHERE name='_migrations'").fetchone():
            self.db.close()  # another program's SQLite file (even one with a `runs` table): no upgrade makes it one
            raise CtxprobeError(f"{where} is no ctxprobe store (it has no migrations table); pass --store with the "
                                "SQLite file a sweep wrote")
        if missing:
            self.db.close()
            raise CtxprobeError(f"store {where} is not at this ctxprobe's schema (missing "
                                f"{', '.join(missing)}: written by an older version, or mid-upgrade); it is "
                                f"left as is: `ctxprobe runs --store {where}` upgrades it, then read it again")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # runs -----------------------------------------------------------------------------
    def ensure_run(self, run_id: str, *, model: str, tokenizer: str, family: str, version: str,
                   spec: dict[str, Any], meta: RunMeta | Mapping[str, Any]) -> bool:
        """Create the run if new; return True when it already existed (a resume). A mapping
        ``meta`` is read as :meth:`RunMeta.from_json` reads stored meta."""
        now = _now()
        with self.db:
            cur = self.db.execute(
                "INSERT OR IGNORE INTO runs (run_id, created_at, updated_at, model, tokenizer, family,"
                " ctxprobe_version, spec_json, meta_json, status) VALUES (?,?,?,?,?,?,?,?,?, 'running')",
                (run_id, now, now, model, tokenizer, family, version, json.dumps(spec), json.dumps(scrub_obj(_meta(meta).to_json()))),
            )
        return cur.rowcount == 0

    def update_run(self, run_id: str, *, status: str | None = None, meta: RunMeta | Mapping[str, Any] | None = None) -> None:
        """Set the status and/or merge ``meta``'s set fields into the stored meta."""
        with self.db:
            # the write lock first: another process may merge its own meta keys meanwhile
            self.db.execute("BEGIN IMMEDIATE")
            if meta is not None:
                row = self.db.execute("SELECT meta_json FROM runs WHERE run_id=?", (run_id,)).fetchone()
                merged = {**(json.loads(row[0]) if row else {}), **_meta(meta).to_json()}
                merged = scrub_obj(merged)  # API keys never reach the store, run meta included
                self.db.execute("UPDATE runs SET meta_json=?, updated_at=? WHERE run_id=?",
                                (json.dumps(merged), _now(), run_id))
            if status is not None:
                self.db.execute("UPDATE runs SET status=?, updated_at=? WHERE run_id=?", (status, _now(), run_id))

    def _record(self, row: sqlite3.Row | tuple[Any, ...]) -> RunRecord:
        (run_id, created, updated, model, tok, fam, ver, spec, meta, status, n_cases, n_resp, n_final) = row
        meta_d = RunMeta.from_json(scrub_obj(json.loads(meta)))  # scrubbed: runs stored before meta was
        if status == "running" and not live_sessions(self.db, run_id):
            status = "interrupted"  # stored as running, but no process holds it (killed)
        batch = batch_summary(self.db, run_id)
        if batch is not None:
            status = "waiting"  # batches at the provider: a rerun polls them
        planned = meta_d.planned_cases
        return RunRecord(run_id, created, updated, model, tok, fam, ver, json.loads(spec), meta_d, status,
                         n_cases or 0, n_resp or 0, planned if planned is not None else (n_cases or 0),
                         n_final or 0, batch)

    _RUN_SELECT = (
        "SELECT r.run_id, r.created_at, r.updated_at, r.model, r.tokenizer, r.family, r.ctxprobe_version,"
        " r.spec_json, r.meta_json, r.status,"
        " (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.run_id),"
        " (SELECT COUNT(*) FROM responses s WHERE s.run_id = r.run_id),"
        " (SELECT COUNT(*) FROM responses s WHERE s.run_id = r.run_id AND s.outcome != 'error') FROM runs r"
    )

    def get_run(self, run_id: str) -> RunRecord | None:
        rows = self.db.execute(self._RUN_SELECT + " WHERE r.run_id LIKE ? ORDER BY r.created_at",
                               (run_id + "%",)).fetchall()
        exact = [r for r in rows if r[0] == run_id]
        if exact:
            return self._record(exact[0])
        if len(rows) > 1:
            raise CtxprobeError(f"run id prefix '{run_id}' is ambiguous ({len(rows)} runs); give more characters")
        return self._record(rows[0]) if rows else None

    def require_run(self, run_id: str) -> RunRecord:
        run = self.get_run(run_id)
        if run is None:
            raise CtxprobeError(f"no run '{run_id}' in {self.path}; `ctxprobe runs --store {self.path}` lists them")
        return run

    def list_runs(self) -> list[RunRecord]:
        return [self._record(r) for r in self.db.execute(self._RUN_SELECT + " ORDER BY r.created_at, r.run_id")]

    # cases and responses --------------------------------------------------------------------
    def done_case_ids(self, run_id: str) -> set[str]:
        """Cases with a stored response that is final (errors are retried on resume)."""
        rows = self.db.execute("SELECT case_id FROM responses WHERE run_id=? AND outcome != 'error'", (run_id,))
        return {r[0] for r in rows}

    def sample_case(self, run_id: str) -> tuple[str, str, int, float, int, str] | None:
        """One stored case, the cheapest to rebuild (the shortest length): (case_id, family,
        length, depth, rep, prompt_hash), or None when the run has none yet."""
        row = self.db.execute("SELECT case_id, family, length, depth, rep, prompt_hash FROM cases WHERE run_id=?"
                              " ORDER BY length, rep, depth, case_id LIMIT 1", (run_id,)).fetchone()
        return None if row is None else (row[0], row[1], int(row[2]), float(row[3]), int(row[4]), row[5])

    def case_ids(self, run_id: str) -> set[str]:
        """Cases built and stored for the run."""
        return {r[0] for r in self.db.execute("SELECT case_id FROM cases WHERE run_id=?", (run_id,))}

    def outcome_counts(self, run_id: str) -> dict[str, int]:
        """Stored responses per outcome label."""
        rows = self.db.execute("SELECT outcome, COUNT(*) FROM responses WHERE run_id=? GROUP BY outcome", (run_id,))
        return {outcome: int(n) for outcome, n in rows}

    def save_case(self, run_id: str, case: Case) -> None:
        """Store a case once: a stored case is what its stored response was scored against,
        so it is never replaced (a second process building the same case stores nothing)."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO prompts VALUES (?, ?)",
                            (case.prompt_hash, json.dumps(case.messages, ensure_ascii=False)))
            c = case.cell
            self.db.execute(
                "INSERT OR IGNORE INTO cases (run_id, case_id, family, length, depth, rep, seed, prompt_hash,"
                " token_count, needle_token_pos, realised_depth, expected_json, distractors_json, meta_json,"
                " reasoning_budget) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, case.case_id, c.family, c.length, c.depth, case.rep, case.seed, case.prompt_hash,
                 case.token_count, case.needle_token_pos, case.realised_depth, json.dumps(case.expected),
                 json.dumps(case.distractors), json.dumps(case.meta, ensure_ascii=False), c.reasoning_budget),
            )

    def save_response(self, run_id: str, case_id: str, response: StoredResponse) -> bool:
        """Store a response, scrubbed of API keys; return False when it was not stored.

        The one write path of every response (swept, batched, judged, imported). Only an
        ``error`` is ever replaced: a stored final response (any other outcome, the
        model's answer as scored) is kept whatever arrives later for the same case — a
        late duplicate, or a timeout from another process."""
        return write_response(self.db, run_id, case_id, response, _now())

    def spent(self, run_id: str) -> float:
        row = self.db.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM responses WHERE run_id=?", (run_id,)).fetchone()
        return float(row[0])

    def cache_totals(self, run_id: str) -> tuple[int, int, int]:
        """(cached prompt tokens, responses that reported a cache figure, their prompt tokens)."""
        row = self.db.execute(
            "SELECT COALESCE(SUM(s.cached_prompt_tokens), 0), COUNT(s.cached_prompt_tokens),"
            " COALESCE(SUM(CASE WHEN s.cached_prompt_tokens IS NOT NULL"
            " THEN COALESCE(s.reported_prompt_tokens, c.token_count) END), 0)"
            " FROM responses s JOIN cases c USING (run_id, case_id) WHERE s.run_id=?", (run_id,)).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    def billing(self, run_id: str) -> tuple[float, int, int, int, int]:
        """(USD billed, prompt tokens, of them read from the prompt cache, written to it,
        responses priced) over the run's responses."""
        row = self.db.execute(
            "SELECT COALESCE(SUM(s.cost_usd), 0), COALESCE(SUM(COALESCE(s.reported_prompt_tokens, c.token_count)), 0),"
            " COALESCE(SUM(s.cached_prompt_tokens), 0), COALESCE(SUM(s.cache_write_tokens), 0), COUNT(s.cost_usd)"
            " FROM responses s JOIN cases c USING (run_id, case_id) WHERE s.run_id=? AND s.outcome != 'error'",
            (run_id,)).fetchone()
        return float(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4])

    def prompt_overcounts(self, run_id: str, slack: int = 4, share: float = 0.005) -> tuple[int, int]:
        """(responses whose server counted more prompt tokens than the case was built to,
        beyond ``max(slack, share × built)``; the largest excess)."""
        row = self.db.execute(
            "SELECT COUNT(*), COALESCE(MAX(s.reported_prompt_tokens - c.token_count), 0)"
            " FROM responses s JOIN cases c USING (run_id, case_id) WHERE s.run_id=?"
            " AND s.reported_prompt_tokens - c.token_count > MAX(?, CAST(? * c.token_count AS INTEGER))",
            (run_id, slack, share)).fetchone()
        return int(row[0]), int(row[1])

    def result_rows(self, run_id: str) -> list[ResultRow]:
        q = ("SELECT c.family, c.length, c.depth, c.rep, s.outcome, s.score, c.token_count, c.reasoning_budget,"
             " s.reasoning_tokens, c.case_id FROM cases c"
             " JOIN responses s USING (run_id, case_id) WHERE c.run_id=? ORDER BY c.length, c.depth, c.rep")
        return [ResultRow(family, length, depth, rep, outcome, score, tokens, budget, reasoning, sample_of_id(case_id))
                for family, length, depth, rep, outcome, score, tokens, budget, reasoning, case_id
                in self.db.execute(q, (run_id,))]

    def save_rag_confirmation(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """Store one ``decide --rag --confirm`` result (:mod:`ctxprobe.store.confirmations`)."""
        return save_confirmation(self.db, row)

    def rag_confirmations(self, run_id: str) -> list[dict[str, Any]]:
        """The run's stored ``decide --rag --confirm`` results, oldest first."""
        return read_confirmations(self.db, run_id)

    def iter_case_records(self, run_id: str) -> Iterator[CaseRecord]:
        """Every case of a run with its prompt and (if any) response, for export."""
        return read_case_records(self.db, run_id)


def open_existing(store_path: str | Path) -> Store:
    """Read commands never create a store by accident."""
    p = Path(store_path)
    if not p.is_file():
        raise CtxprobeError(f"no store at {p}; run a sweep first or pass --store PATH")
    return Store(p)


def iter_records(run_id: str, store_path: str | Path) -> Iterator[CaseRecord]:
    """Every case record of a run (case, prompt, response), streamed: what reports read."""
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        yield from store.iter_case_records(run.run_id)


def iter_export(run_id: str, store_path: str | Path) -> Iterator[dict[str, Any]]:
    """Every case record of a run as the export's JSON line, with the run's model and
    tokenizer: what exports and checks read."""
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        for rec in store.iter_case_records(run.run_id):
            yield {"run_id": run.run_id, "model": run.model, "tokenizer": run.tokenizer, **rec.to_json()}
