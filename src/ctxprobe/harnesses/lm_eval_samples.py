"""lm-eval's ``--log_samples`` output of an exported run, stored as a ctxprobe run
(``ctxprobe import-lm-eval SAMPLES... --store S``).

Each line of a ``samples_<task>_<date>.jsonl`` holds the ``doc`` (ours: its case id,
prompt hash and source run), ``arguments`` (the request: under ``--apply_chat_template``
the chat messages as JSON) and ``resps`` (the raw generations; ``filtered_resps`` after
the task's filters, none in ours). A run without ``--apply_chat_template`` sent plain
text, not the case's chat, and is refused. The source run's stored cases (in ``--store``,
or ``--source-store``) are what the answers are scored against; a doc whose prompt is not
its case's (another run's export, an edited file) is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxprobe.core.case import prompt_hash
from ctxprobe.errors import CtxprobeError
from ctxprobe.harnesses.cases import Reply
from ctxprobe.harnesses.importing import Imported, import_replies
from ctxprobe.harnesses.stored import StoredCases


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise CtxprobeError(f"no lm-eval samples file at {path}")
    rows = []
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise CtxprobeError(f"{path} line {i} is not JSON ({err.msg})") from None
    return rows


def _reply(row: dict[str, Any], path: Path) -> tuple[str, Reply]:
    doc = row.get("doc") or {}
    if "case_id" not in doc or "run_id" not in doc:
        raise CtxprobeError(f"{path}: a sample whose doc names no ctxprobe case (not an export of "
                            "`ctxprobe export --lm-eval`)")
    resps = row.get("resps") or []
    first = resps[0] if resps else None
    text = first[0] if isinstance(first, list) and first else first
    return str(doc["run_id"]), Reply(str(doc["case_id"]), None if text is None else str(text),
                                     error=None if text is not None else "no answer",
                                     prompt_hash=prompt_hash(_sent(row, doc)))


def _sent(row: dict[str, Any], doc: dict[str, Any]) -> list[dict[str, str]]:
    """The messages lm-eval sent: its logged request (``arguments``: the chat as JSON, under
    ``--apply_chat_template``), else the doc's system and user text."""
    args = (row.get("arguments") or {}).get("gen_args_0") or {}
    first = args.get("arg_0")
    if isinstance(first, str):
        try:
            chat = json.loads(first)
        except json.JSONDecodeError:
            chat = None  # a plain-text prompt (no chat template): not what the case was built as
        if isinstance(chat, list):
            return [{"role": str(m.get("role")), "content": str(m.get("content"))} for m in chat]
        return [{"role": "text", "content": first}]
    return ([{"role": "system", "content": doc["system"]}] if doc.get("system") else []) + [
        {"role": "user", "content": doc["prompt"]}]


def import_lm_eval_samples(paths: list[str], store_path: str | Path,
                           source_store: str | Path | None = None) -> list[Imported]:
    """One run per source run the samples answer (usually one)."""
    by_run: dict[str, list[Reply]] = {}
    names: dict[str, list[str]] = {}
    for name in paths:
        path = Path(name)
        for row in _lines(path):
            run_id, reply = _reply(row, path)
            by_run.setdefault(run_id, []).append(reply)
            names.setdefault(run_id, [])
            if path.name not in names[run_id]:
                names[run_id].append(path.name)
    if not by_run:
        raise CtxprobeError("the samples files hold no samples")
    done = []
    for run_id, replies in by_run.items():
        stored = StoredCases(run_id, source_store or store_path)
        done.append(import_replies(stored, replies, store_path, source="lm-eval",
                                   source_id=",".join(sorted(names[run_id])) + f"@{run_id}",
                                   harness_model=f"lm-eval:{stored.run_id}",
                                   meta={"source_run": stored.run_id, "lm_eval_samples": names[run_id]},
                                   mismatch_hint="run lm_eval with --apply_chat_template (without it the case's chat "
                                                 "is sent as plain text), on the folder `export --lm-eval` wrote"))
    return done
