"""Reader for the published ``openai/mrcr`` parquet files: each row one case of an instance
pack (:mod:`ctxprobe.sweep.published` writes it) with its prompt *unchanged*, scored by the
family by the original rule (OpenAI's prefix + SequenceMatcher rule, the last-occurrence
rule beside it), so a model's number can stand beside the published one. Nothing is
downloaded: the user gives the path.

Cells: the length is the upper edge of OpenAI's power-of-two bin holding the row's prompt +
answer tokens counted with the pack's tokenizer; the depth is the asked message's share of
the conversation (one decimal); the repetition is the row's index in the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.case_meta import PublishedMrcrMeta
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.published import PublishedSet, ReadOptions, bin_edge, read_rows

MRCR_COLUMNS = ("prompt", "answer", "random_string_to_prepend", "n_needles", "desired_msg_index", "total_messages",
                "n_chars")


def mrcr_cases(path: str | Path, tokenizer: Any) -> Iterator[Case]:
    for i, row in enumerate(read_rows(path, MRCR_COLUMNS)):
        try:
            messages = json.loads(row["prompt"]) if isinstance(row["prompt"], str) else list(row["prompt"])
        except json.JSONDecodeError as err:
            raise CtxprobeError(f"{path} row {i}: prompt is not a JSON list of messages ({err.msg})") from None
        answer, prefix = str(row["answer"]), str(row["random_string_to_prepend"])
        tokens = tokenizer.count_chat(messages)
        answer_tokens = tokenizer.count(answer)
        want = int(row["desired_msg_index"])
        budget = answer_tokens + max(32, answer_tokens // 4)
        meta: PublishedMrcrMeta = {
            "source": "openai/mrcr", "file": Path(path).name, "row": i, "random_string_to_prepend": prefix,
            "n_needles": int(row["n_needles"]), "desired_msg_index": want,
            "total_messages": int(row.get("total_messages") or len(messages)),
            "n_chars": row.get("n_chars"), "tokens_to_generate": budget}
        depth = round(want / max(1, len(messages) - 1), 1)
        yield Case(Cell("mrcr", bin_edge(tokens + answer_tokens), min(1.0, depth)), i, 0, messages, [answer],
                   meta=meta, token_count=tokens, max_tokens=meta["tokens_to_generate"])


def _read(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
    return mrcr_cases(path, tok)


#: ``import-published mrcr``.
MRCR = PublishedSet("mrcr", _read)
