"""The one writer of every published set's instance pack (:func:`write_published_pack`), and
the sets ``import-published`` reads, looked up on the families' declarations
(``published_sets``: MRCR's and GraphWalks' own files in their packages, the natural sets
LongBench v2, LongMemEval and Oolong in ``documents``'; :class:`ctxprobe.haystack.published.PublishedSet`).

Each row becomes one case of an instance pack (:mod:`ctxprobe.sweep.packs`) with its prompt
*unchanged*: ``ctxprobe run --cases PACK --model M`` sends it as published and the family
scores it by the original rule, so a model's number can stand beside the published one.
Nothing is downloaded: the user gives the path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxprobe._version import __version__
from ctxprobe.core import registry
from ctxprobe.core.case_meta import EmptyGold, GraphwalksParse
from ctxprobe.core.pack import PackLine
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.published import PublishedSet, ReadOptions


def set_names() -> tuple[str, ...]:
    """The sets import-published reads: each family's declared sets, in its declared order,
    the families by name. Read from the declarations registered as one (ctxprobe's and a
    plugin's registered in code) without importing anything, so the CLI's parser imports no
    plugin; a set of a family known only by an entry point's path is read by
    :func:`published_set` all the same."""
    return tuple(name for d in registry.declared_families() for name in d.published_sets)


def published_set(name: str) -> tuple[str, PublishedSet]:
    """(the family that reads it, the set) for the set ``name``, or a one-line error."""
    for entry in registry.entries("families"):
        declared = entry.declaration()
        if name in declared.published_sets:
            return entry.name, declared.load_published(name)
    raise CtxprobeError(f"unknown published set '{name}': {', '.join(set_names())}")


def write_published_pack(kind: str, path: str | Path, out: str | Path, tokenizer_name: str, *,
                         model: str | None = None, parse: GraphwalksParse = "lm-eval",
                         empty_gold: EmptyGold = "zero", history_format: str = "json", reading: str = "con",
                         judge: str | None = None) -> int:
    """Write the rows of a published file as an instance pack; returns the row count.
    ``history_format`` and ``reading`` shape LongMemEval's prompt; ``judge`` names the
    judge the pack's LongMemEval cases are graded by (``run --cases --judge`` overrides)."""
    from ctxprobe.tokenizers import resolve_tokenizer

    family, published = published_set(kind)
    tok = resolve_tokenizer(tokenizer_name)
    cases = published.read(path, tok, ReadOptions(parse=parse, empty_gold=empty_gold, history_format=history_format,
                                                  reading=reading))
    # a documents pack names its source file as the family's docs and qa (scoring reads only the case)
    params: dict[str, Any] = {"docs": str(Path(path).parent), "qa": str(path)} if published.natural else {}
    if published.judged:
        params["match"] = "judge"
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
