"""The natural published sets ``import-published`` reads as ``documents`` cases: LongBench v2
(``task_longbench.py``), LongMemEval (``task_longmemeval.py``, graded by the judge) and
Oolong's two splits (``task_oolong.py``); each file's path is the pack's ``docs``/``qa``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxprobe.core.case import Case
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.published import PublishedSet, ReadOptions, Reader


def _longbench_v2(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
    from ctxprobe.families.documents.task_longbench import longbench_v2_cases

    return longbench_v2_cases(path, tok)


def _longmemeval(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
    from ctxprobe.families.documents.task_longmemeval import longmemeval_cases

    if o.history_format not in ("json", "nl") or o.reading not in ("con", "direct"):
        raise CtxprobeError("longmemeval: history format json or nl, reading con or direct")
    return longmemeval_cases(path, tok, history_format="nl" if o.history_format == "nl" else "json",
                             reading="direct" if o.reading == "direct" else "con")


def _oolong(split: str) -> Reader:
    def read(path: str | Path, tok: Any, o: ReadOptions) -> Iterator[Case]:
        from ctxprobe.families.documents.task_oolong import oolong_cases

        return oolong_cases(path, tok, "oolong-synth" if split == "oolong-synth" else "oolong-real")
    return read


LONGBENCH_V2 = PublishedSet("longbench-v2", _longbench_v2, natural=True)
LONGMEMEVAL = PublishedSet("longmemeval", _longmemeval, natural=True, judged=True)
OOLONG_SYNTH = PublishedSet("oolong-synth", _oolong("oolong-synth"), natural=True)
OOLONG_REAL = PublishedSet("oolong-real", _oolong("oolong-real"), natural=True)
