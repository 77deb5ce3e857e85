"""Reader for local copies of Oolong's test splits (``oolongbench/oolong-synth``,
``oolongbench/oolong-real``; ``abertsch72/oolong``): parquet, JSON lines or a JSON list of
rows with ``id``, ``context_window_id``, ``context_window_text``, ``question``, ``answer``
(synth also ``answer_type``, ``dataset``, ``task_group``, ``task``, ``context_len``).

Each row becomes one ``documents`` case of an instance pack, its messages as
``src/eval/eval_script_batched.py`` sends them: a system message of ``You are a helpful
assistant.`` and the context window's text (two text parts there, one string here,
joined by a blank line), then the question as the user's message. The reply is scored by
Oolong's rule for the split (:mod:`ctxprobe.scores.oolong`; synth: exact label or date,
``0.75 ** |error|`` for counts; real: the boxed answer). Nothing is downloaded.

Cells: the length is the power-of-two bin holding the prompt's tokens (as for MRCR),
depth 0; the rows keep their file order.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from ctxprobe.core.case import Case, Cell
from ctxprobe.errors import CtxprobeError
from ctxprobe.scores.oolong import check_synth_answer
from ctxprobe.haystack.published import bin_edge, read_json_rows

OolongSplit = Literal["oolong-synth", "oolong-real"]
SYSTEM = "You are a helpful assistant."
#: The original sends no output limit; this is ctxprobe's (a listed difference).
MAX_NEW_TOKENS = 2048
FIELDS = ("id", "context_window_id", "context_window_text", "question", "answer")
SOURCES = {"oolong-synth": "oolongbench/oolong-synth", "oolong-real": "oolongbench/oolong-real"}
KEPT = ("dataset", "task_group", "task", "answer_type", "context_len", "input_subset", "num_labels")


def _rows(p: Path) -> list[dict[str, Any]]:
    if p.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise CtxprobeError("reading parquet needs pyarrow: pip install 'ctxprobe[export]'") from None
        try:
            rows: list[dict[str, Any]] = pq.read_table(p).to_pylist()
        except Exception as err:  # pyarrow raises many types for a missing or bad file
            raise CtxprobeError(f"cannot read {p} as parquet: {err}") from None
        return rows
    data = read_json_rows(p, "Oolong's JSON lines or a JSON list of rows")
    if isinstance(data, dict):  # JSON lines of one row
        data = [data]
    if not isinstance(data, list):
        raise CtxprobeError(f"{p} is not a list of Oolong rows")
    return data


def read_oolong(path: str | Path, split: OolongSplit) -> list[dict[str, Any]]:
    p = Path(path)
    rows = _rows(p)
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise CtxprobeError(f"{p} row {i}: not an object of Oolong's layout")
        missing = [k for k in (*FIELDS, *(("answer_type",) if split == "oolong-synth" else ())) if k not in row]
        if missing:
            raise CtxprobeError(f"{p} row {i}: lacks the field(s) {', '.join(missing)} of {split}'s layout")
        if not isinstance(row["context_window_text"], str) or not isinstance(row["question"], str):
            raise CtxprobeError(f"{p} row {i}: context_window_text and question must be strings")
        why = (check_synth_answer(row["answer"]) if split == "oolong-synth"
               else None if isinstance(row["answer"], (str, int)) and not isinstance(row["answer"], bool)
               else f"answer {row['answer']!r} is neither a string nor an integer")
        if why:
            raise CtxprobeError(f"{p} row {i}: {why}")
    return rows


def oolong_messages(row: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": "system", "content": f"{SYSTEM}\n\n{row['context_window_text']}"},
            {"role": "user", "content": f"{row['question']}"}]


def oolong_cases(path: str | Path, tokenizer: Any, split: OolongSplit) -> Iterator[Case]:
    for i, row in enumerate(read_oolong(path, split)):
        messages = oolong_messages(row)
        tokens = tokenizer.count_chat(messages)
        meta = {"source": SOURCES[split], "file": Path(path).name, "row": i, "id": str(row["id"]),
                "context_window_id": str(row["context_window_id"]),
                **{k: row[k] for k in KEPT if k in row}, "question": row["question"], "aliases": [],
                "rule": split, "tokens_to_generate": MAX_NEW_TOKENS}
        yield Case(Cell("documents", bin_edge(tokens), 0.0), i, 0, messages, [str(row["answer"])], meta=meta,
                   token_count=tokens, max_tokens=MAX_NEW_TOKENS)
