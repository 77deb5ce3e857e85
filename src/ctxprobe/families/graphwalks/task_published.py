"""Reader for the published ``openai/graphwalks`` parquet files: each row one case of an
instance pack (:mod:`ctxprobe.sweep.published` writes it) with its prompt *unchanged*, scored
by the family by set F1 with the chosen parsing (``parse``, ``empty_gold``), so a model's
number can stand beside the published one. Nothing is downloaded: the user gives the path.

Cells: the length is the upper edge of OpenAI's power-of-two bin holding the row's prompt
tokens counted with the pack's tokenizer; the depth 0 (GraphWalks has none); the repetition
is the row's index in the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.case_meta import EmptyGold, GraphwalksParse, PublishedGraphwalksMeta
from ctxprobe.haystack.published import PublishedSet, ReadOptions, bin_edge, read_rows

GRAPHWALKS_COLUMNS = ("prompt", "answer_nodes", "prompt_chars", "problem_type")


def graphwalks_cases(path: str | Path, tokenizer: Any, *, parse: GraphwalksParse = "lm-eval",
                     empty_gold: EmptyGold = "zero"
                     ) -> Iterator[Case]:
    for i, row in enumerate(read_rows(path, GRAPHWALKS_COLUMNS)):
        messages = [{"role": "user", "content": str(row["prompt"])}]
        gold = [str(n) for n in (row["answer_nodes"] or [])]
        tokens = tokenizer.count_chat(messages)
        meta: PublishedGraphwalksMeta = {
            "source": "openai/graphwalks", "file": Path(path).name, "row": i,
            "problem_type": row.get("problem_type"), "prompt_chars": row.get("prompt_chars"),
            "parse": parse, "empty_gold": empty_gold,
            "tokens_to_generate": 64 + 8 * len(gold)}
        yield Case(Cell("graphwalks", bin_edge(tokens), 0.0), i, 0, messages, gold, meta=meta, token_count=tokens,
                   max_tokens=meta["tokens_to_generate"])


def _read(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
    return graphwalks_cases(path, tok, parse=o.parse, empty_gold=o.empty_gold)


#: ``import-published graphwalks``.
GRAPHWALKS = PublishedSet("graphwalks", _read)
