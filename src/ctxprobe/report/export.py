"""``ctxprobe export RUN``: every case of a run as CSV, Parquet, an instance pack, or RULER JSONL.

- CSV / Parquet: one flat row per case for pandas, spreadsheets and SQL engines. Prompts
  are left out (they can be megabytes each); ``prompt_hash`` links a row to its prompt in
  the store or in a pack. Lists and dicts are JSON strings so every column is a scalar.
- Instance pack (JSONL): everything needed to send exactly the same prompts again on
  another machine and score them the same way (see :mod:`ctxprobe.sweep.packs`).
- RULER JSONL: RULER's own data fields (``index``, ``input``, ``outputs``, ``length``,
  ``length_w_model_temp``, ``answer_prefix``, ``token_position_answer``) so our cases can
  be fed to RULER's ``pred/call_api.py`` and other runners that read its format.
- RULER predictions (``export --ruler -o DIR``): ``DIR/<length>/<task>.jsonl`` with the
  fields RULER's ``pred/call_api.py`` writes (``index``, ``pred``, ``input``, ``outputs``,
  ``others``, ``truncation``, ``length``), so RULER's ``eval/evaluate.py --data_dir
  DIR/<length>`` scores them as is.

Parquet needs pyarrow, an optional extra (``ctxprobe[export]``), imported only here.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, TextIO

from ctxprobe.errors import CtxprobeError, MissingExtraError
from ctxprobe.report.redact import redact, redact_obj
from ctxprobe.report.hooks import family_hooks
from ctxprobe.report.rundata import family_names
from ctxprobe.store import CaseRecord, iter_records, open_existing
from ctxprobe.core.pack import PackLine
from ctxprobe.core.case_meta import case_meta

#: CSV/Parquet columns, in order. Kept stable: downstream notebooks select by name.
COLUMNS: tuple[str, ...] = (
    "run_id", "model", "tokenizer", "case_id", "family", "length", "depth", "rep", "seed", "prompt_hash",
    "token_count", "needle_token_pos", "realised_depth", "reported_prompt_tokens", "completion_tokens",
    "finish_reason", "latency_s", "attempts", "outcome", "score", "error", "expected", "distractors", "output",
    "meta", "detail", "cached_prompt_tokens", "cache_write_tokens",
)
_JSON_COLUMNS = frozenset({"expected", "distractors", "meta", "detail"})
#: The columns that are the run's, not the case's.
_RUN_COLUMNS = frozenset({"run_id", "model", "tokenizer"})


def export_jsonl(run_id: str, store_path: str | Path, out: TextIO) -> int:
    """Every case with its result, one JSON line each. Each line is also an instance pack
    line (``ctxprobe run --cases FILE`` re-sends exactly these prompts elsewhere)."""
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
    n = 0
    for rec in iter_records(run.run_id, store_path):
        line = {"run_id": run.run_id, "model": redact(run.model), "tokenizer": run.tokenizer, **rec.to_json(),
                **pack_line(rec, run)}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        n += 1
    return n


def case_rows(run_id: str, store_path: str | Path) -> Iterator[dict[str, Any]]:
    """Flat rows (``COLUMNS``), secrets removed from the model string and error texts."""
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
    for rec in iter_records(run.run_id, store_path):
        row = {"run_id": run.run_id, "model": redact(run.model), "tokenizer": run.tokenizer,
               **{name: getattr(rec, name) for name in COLUMNS if name not in _RUN_COLUMNS}}
        if row["error"] is not None:
            row["error"] = redact(str(row["error"]))
        for name in _JSON_COLUMNS:
            row[name] = None if row[name] is None else json.dumps(row[name], ensure_ascii=False, sort_keys=True)
        yield row


def _open(path: str | Path, mode: str = "w") -> IO[str]:
    try:
        return open(path, mode, encoding="utf-8", newline="")
    except OSError as err:
        raise CtxprobeError(f"cannot write {path}: {err.strerror or err}") from None


def write_csv(run_id: str, store_path: str | Path, out: str | Path | IO[str]) -> int:
    """One row per case; returns the row count."""
    fh = _open(out) if isinstance(out, (str, Path)) else out
    try:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS), extrasaction="ignore")
        writer.writeheader()
        n = 0
        for row in case_rows(run_id, store_path):
            writer.writerow(row)
            n += 1
        return n
    finally:
        if isinstance(out, (str, Path)):
            fh.close()


def write_parquet(run_id: str, store_path: str | Path, out: str | Path, batch: int = 2000) -> int:
    """One row per case, written in batches (bounded memory); returns the row count."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise MissingExtraError("pyarrow", "export", "Parquet export") from exc
    types = {"length": pa.int64(), "rep": pa.int64(), "seed": pa.int64(), "token_count": pa.int64(),
             "needle_token_pos": pa.int64(), "reported_prompt_tokens": pa.int64(), "completion_tokens": pa.int64(),
             "cached_prompt_tokens": pa.int64(), "cache_write_tokens": pa.int64(), "attempts": pa.int64(), "depth": pa.float64(), "realised_depth": pa.float64(),
             "latency_s": pa.float64(), "score": pa.float64()}
    schema = pa.schema([(c, types.get(c, pa.string())) for c in COLUMNS])
    n = 0
    try:
        with pq.ParquetWriter(str(out), schema) as writer:
            rows: list[dict[str, Any]] = []
            for row in case_rows(run_id, store_path):
                rows.append(row)
                if len(rows) >= batch:
                    writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                    n, rows = n + len(rows), []
            if rows or n == 0:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                n += len(rows)
    except OSError as err:
        raise CtxprobeError(f"cannot write {out}: {err}") from None
    return n


def pack_line(rec: CaseRecord, run: Any) -> dict[str, Any]:
    """One self-contained pack line (:class:`ctxprobe.core.pack.PackLine`) of a stored case:
    the case plus what is needed to rebuild and judge it, the run's spec redacted."""
    case = rec.to_case()
    claimed = {"case_id": rec.case_id, "prompt_hash": rec.prompt_hash, "content_hash": case.content_hash}
    return PackLine(case, run.tokenizer, redact_obj(run.spec), run.meta.chat_template_hash, run.run_id,
                    run.ctxprobe_version, claimed).to_json()


def write_pack(run_id: str, store_path: str | Path, out: str | Path | IO[str]) -> int:
    """Instance pack of a run (JSONL, one case per line); returns the case count."""

    with open_existing(store_path) as store:
        run = store.require_run(run_id)
    fh = _open(out) if isinstance(out, (str, Path)) else out
    try:
        n = 0
        for rec in iter_records(run.run_id, store_path):
            fh.write(json.dumps(pack_line(rec, run), ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
        return n
    finally:
        if isinstance(out, (str, Path)):
            fh.close()


def ruler_line(index: int, rec: CaseRecord) -> dict[str, Any]:
    """A case in RULER's data format.

    ``input`` is the raw prompt before the chat template (what RULER stores; its runner
    applies the template); ``length`` is our count of the templated prompt, which RULER
    calls ``length_w_model_temp`` — we have no template-free count, so both carry it.
    ctxprobe's coordinates ride along in ``others``, which RULER's runner passes through.
    """
    text, prefix = _input_and_prefix(rec)
    return {
        "index": index,
        "input": text,
        "outputs": [str(v) for v in rec.expected],
        "length": rec.token_count,
        "length_w_model_temp": rec.token_count,
        "answer_prefix": prefix,
        "token_position_answer": rec.needle_token_pos if rec.needle_token_pos is not None else -1,
        "others": {"case_id": rec.case_id, "family": rec.family, "target_length": rec.length,
                   "depth": rec.depth, "rep": rec.rep, "seed": rec.seed, "prompt_hash": rec.prompt_hash,
                   "distractors": rec.distractors},
    }


def _input_and_prefix(rec: CaseRecord) -> tuple[str, str]:
    """The prompt text without chat template, and the answer prefix (a trailing assistant
    message) separately — RULER's ``input`` and ``answer_prefix``."""
    messages = list(rec.messages)
    prefix = ""
    if len(messages) > 1 and messages[-1].get("role") == "assistant":
        prefix = str(messages.pop().get("content") or "")
    if case_meta(rec.meta or {}).get("ruler_task"):
        # RULER's base rendering of a worked example's exchange (cwe): the reply follows
        # its question directly, a newline before the next question
        return "".join(str(m.get("content") or "") + ("\n" if m.get("role") == "assistant" else "")
                       for m in messages), prefix
    return "\n\n".join(str(m.get("content") or "") for m in messages), prefix


def ruler_prediction(index: int, rec: CaseRecord) -> dict[str, Any]:
    """A scored case as RULER's ``pred/call_api.py`` writes it.

    ``input`` is the prompt with its answer prefix (what call_api sends, before any chat
    template); ``outputs`` are the references RULER scores against (expected values and
    accepted aliases, as ``report --scorer ruler`` uses them); ``length`` is RULER's
    length: prompt tokens (templated) plus the tokens the task generates."""
    text, prefix = _input_and_prefix(rec)
    meta = case_meta(rec.meta or {})
    return {
        "index": index,
        "pred": rec.output or "",
        "input": text + prefix,
        "outputs": [str(v) for v in [*rec.expected, *meta.get("aliases", [])]],
        "others": {"case_id": rec.case_id, "depth": rec.depth, "rep": rec.rep, "seed": rec.seed,
                   "prompt_tokens": rec.token_count, "outcome": rec.outcome},
        "truncation": -1,
        "length": rec.token_count + int(meta.get("tokens_to_generate") or 0),
    }


def write_ruler_predictions(run_id: str, store_path: str | Path, out_dir: str | Path) -> int:
    """``out_dir/<length>/<task>.jsonl`` for every scored case (harness failures, which
    ctxprobe never scores, are left out, so RULER's evaluate.py sees what our RULER scorer
    sees). Returns the number of cases written."""

    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        labels = family_names(run)
    by_file: dict[tuple[int, str], list[CaseRecord]] = {}
    for rec in iter_records(run.run_id, store_path):
        if rec.outcome is None or rec.score is None:
            continue
        by_file.setdefault((rec.length, rec.family), []).append(rec)
    root = Path(out_dir)
    n = 0
    for (length, task), recs in sorted(by_file.items()):
        if not family_hooks(labels.get(task, task)).ruler_predictions:
            continue  # a family RULER has no task for (the phone book)
        folder = root / str(length)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise CtxprobeError(f"cannot create {folder}: {err.strerror or err}") from None
        with _open(folder / f"{task}.jsonl") as fh:
            for i, rec in enumerate(recs):
                fh.write(json.dumps(ruler_prediction(i, rec), ensure_ascii=False) + "\n")
                n += 1
    return n


def write_ruler_jsonl(run_id: str, store_path: str | Path, out: str | Path | IO[str]) -> int:
    fh = _open(out) if isinstance(out, (str, Path)) else out
    try:
        n = 0
        for rec in iter_records(run_id, store_path):
            fh.write(json.dumps(ruler_line(n, rec), ensure_ascii=False) + "\n")
            n += 1
        return n
    finally:
        if isinstance(out, (str, Path)):
            fh.close()
