"""Readers for the published ``openai/mrcr`` and ``openai/graphwalks`` parquet files, and
the one writer of every published set's pack (:func:`write_published_pack`; the natural
sets' readers are :mod:`ctxprobe.sweep.published_natural` (LongBench v2),
:mod:`ctxprobe.sweep.published_longmemeval` and :mod:`ctxprobe.sweep.published_oolong`).

Each row becomes one case of an instance pack (:mod:`ctxprobe.sweep.packs`) with its
prompt *unchanged*: ``ctxprobe run --cases PACK --model M`` sends it as published and the
family scores it by the original rule (MRCR: OpenAI's prefix + SequenceMatcher rule, the
last-occurrence rule beside it; GraphWalks: set F1 with the chosen parsing), so a model's
number can stand beside the published one. Nothing is downloaded: the user gives the path.

Cells: the length is the upper edge of OpenAI's power-of-two bin holding the row's tokens
(prompt + answer for MRCR, prompt for GraphWalks) counted with the pack's tokenizer; the
depth is the asked message's share of the conversation (MRCR, one decimal) or 0
(GraphWalks has none); the repetition is the row's index in the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.case_meta import EmptyGold, GraphwalksParse, PublishedGraphwalksMeta, PublishedMrcrMeta
from ctxprobe.errors import CtxprobeError
from ctxprobe._version import __version__
from ctxprobe.core.pack import PackLine
from ctxprobe.sweep.published_sets import PUBLISHED, PublishedSet, Reader, ReadOptions, published_set, register_published_set

MRCR_COLUMNS = ("prompt", "answer", "random_string_to_prepend", "n_needles", "desired_msg_index", "total_messages",
                "n_chars")
GRAPHWALKS_COLUMNS = ("prompt", "answer_nodes", "prompt_chars", "problem_type")


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


# ctxprobe's published sets, each registered once (ctxprobe.sweep.published_sets)
def _mrcr(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
    return mrcr_cases(path, tok)


def _graphwalks(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
    return graphwalks_cases(path, tok, parse=o.parse, empty_gold=o.empty_gold)


def _longbench_v2(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
    from ctxprobe.sweep.published_natural import longbench_v2_cases

    return longbench_v2_cases(path, tok)


def _longmemeval(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
    from ctxprobe.sweep.published_longmemeval import longmemeval_cases

    if o.history_format not in ("json", "nl") or o.reading not in ("con", "direct"):
        raise CtxprobeError("longmemeval: history format json or nl, reading con or direct")
    return longmemeval_cases(path, tok, history_format="nl" if o.history_format == "nl" else "json",
                             reading="direct" if o.reading == "direct" else "con")


def _oolong(split: str) -> Reader:
    def read(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
        from ctxprobe.sweep.published_oolong import oolong_cases

        return oolong_cases(path, tok, "oolong-synth" if split == "oolong-synth" else "oolong-real")
    return read


for _set in (PublishedSet("mrcr", _mrcr), PublishedSet("graphwalks", _graphwalks),
             PublishedSet("longbench-v2", _longbench_v2, natural=True),
             PublishedSet("longmemeval", _longmemeval, natural=True, judged=True),
             PublishedSet("oolong-synth", _oolong("oolong-synth"), natural=True),
             PublishedSet("oolong-real", _oolong("oolong-real"), natural=True)):
    register_published_set(_set)

#: The sets import-published reads, in order.
SETS = tuple(PUBLISHED)


def write_published_pack(kind: str, path: str | Path, out: str | Path, tokenizer_name: str, *,
                         model: str | None = None, parse: GraphwalksParse = "lm-eval",
                         empty_gold: EmptyGold = "zero", history_format: str = "json", reading: str = "con",
                         judge: str | None = None) -> int:
    """Write the rows of a published file as an instance pack; returns the row count.
    ``history_format`` and ``reading`` shape LongMemEval's prompt; ``judge`` names the
    judge the pack's LongMemEval cases are graded by (``run --cases --judge`` overrides)."""
    from ctxprobe.tokenizers import resolve_tokenizer

    published = published_set(kind)
    tok = resolve_tokenizer(tokenizer_name)
    cases = published.read(path, tok, ReadOptions(parse=parse, empty_gold=empty_gold, history_format=history_format,
                                                  reading=reading))
    # a documents pack names its source file as the family's docs and qa (scoring reads only the case)
    params: dict[str, Any] = {"docs": str(Path(path).parent), "qa": str(path)} if published.natural else {}
    if published.judged:
        params["match"] = "judge"
    family = published.family
    spec = {"model": model or "", "tokenizer": tokenizer_name, "families": {family: params},
            **({"judge": judge} if judge else {})}
    n = 0
    with open(out, "w", encoding="utf-8") as fh:
        for case in cases:
            line = PackLine.of_case(case, tokenizer=tokenizer_name, spec=spec, chat_template_hash=tok.chat_template_hash,
                                    ctxprobe_version=__version__).to_json()
            fh.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
    if not n:
        raise CtxprobeError(f"{path} holds no rows")
    return n
