"""A published set ``import-published`` reads, as its family declares it: :class:`PublishedSet`
(its name, its reader, whether its cases are natural documents and judged), named on the
family's declaration (``published_sets``: MRCR's and GraphWalks' own files, the natural sets
``documents`` reads) and looked up by :mod:`ctxprobe.sweep.published`, which writes the pack;
and what the families' readers share: a parquet file's rows (:func:`read_rows`), a JSON or
JSON-lines file (:func:`read_json_rows`), OpenAI's power-of-two length bins (:func:`bin_edge`).

A reader is ``read(path, tokenizer, options) -> Iterator[Case]``; :class:`ReadOptions`
holds every set's reading choices (each reader takes the ones it has)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.core.case import Case
from ctxprobe.core.case_meta import EmptyGold, GraphwalksParse
from ctxprobe.errors import CtxprobeError


@dataclass(frozen=True)
class ReadOptions:
    parse: GraphwalksParse = "lm-eval"  # graphwalks: how replies are parsed
    empty_gold: EmptyGold = "zero"  # graphwalks: the score of an empty answer key
    history_format: str = "json"  # longmemeval: the chat history's format (json or nl)
    reading: str = "con"  # longmemeval: con (notes, then answer) or direct


Reader = Callable[[str | Path, Any, ReadOptions], Iterator[Case]]


@dataclass(frozen=True)
class PublishedSet:
    name: str
    read: Reader
    #: Its cases are natural documents: its file is named as the family's ``docs``/``qa``
    #: parameters (scoring reads only the case).
    natural: bool = False
    #: Graded by the judge (the family's ``match: judge``).
    judged: bool = False


def read_rows(path: str | Path, columns: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows of a parquet file (pyarrow, from the ``export`` extra)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CtxprobeError("reading parquet needs pyarrow: pip install 'ctxprobe[export]'") from None
    p = Path(path)
    if not p.is_file():
        raise CtxprobeError(f"no parquet file at {p}")
    try:
        table = pq.read_table(p)
    except Exception as err:  # pyarrow raises many types for a bad file
        raise CtxprobeError(f"cannot read {p} as parquet: {err}") from None
    have = set(table.column_names)
    # the published graphwalks card calls the answer column `answer`; the files say `answer_nodes`
    if "answer_nodes" in columns and "answer_nodes" not in have and "answer" in have:
        table = table.rename_columns(["answer_nodes" if c == "answer" else c for c in table.column_names])
        have = set(table.column_names)
    missing = [c for c in columns if c not in have and c not in ("n_chars", "total_messages", "prompt_chars")]
    if missing:
        raise CtxprobeError(f"{p} lacks the column(s) {', '.join(missing)} of the published layout "
                            f"({', '.join(columns)})")
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def bin_edge(tokens: int) -> int:
    """The upper edge of OpenAI's bins (4K, 8K, ... 1M; powers of two above)."""
    edge = 4096
    while edge < tokens:
        edge *= 2
    return edge


def read_json_rows(p: Path, what: str) -> Any:
    """A local file as one JSON document, else as JSON lines (both originals' scripts read
    either); ``what`` names the expected content in the one-line error."""
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot read {p}: {err.strerror or err}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        try:
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as err:
            raise CtxprobeError(f"{p} is not {what} ({err.msg})") from None
