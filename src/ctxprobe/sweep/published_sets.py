"""The published sets ``import-published`` reads, each declared once: :class:`PublishedSet`
(its name, its reader, whether its cases are natural documents and judged), registered in
:data:`PUBLISHED` by :func:`register_published_set` (ctxprobe's own in
:mod:`ctxprobe.sweep.published`, beside the pack writer that looks a set up here); no
code asks a set by its name.

A reader is ``read(path, tokenizer, options) -> Iterator[Case]``; :class:`ReadOptions`
holds every set's reading choices (each reader takes the ones it has)."""

from __future__ import annotations

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
    #: Its cases are natural: the ``documents`` family's, its file named as the family's
    #: ``docs``/``qa`` (scoring reads only the case); else the family of its own name.
    natural: bool = False
    #: Graded by the judge (``documents`` with ``match: judge``).
    judged: bool = False

    @property
    def family(self) -> str:
        return "documents" if self.natural else self.name


#: Every registered set, by name, in registration order.
PUBLISHED: dict[str, PublishedSet] = {}


def register_published_set(published: PublishedSet) -> PublishedSet:
    if published.name in PUBLISHED:
        raise CtxprobeError(f"published set '{published.name}' is registered twice")
    PUBLISHED[published.name] = published
    return published


def published_set(name: str) -> PublishedSet:
    found = PUBLISHED.get(name)
    if found is None:
        raise CtxprobeError(f"unknown published set '{name}': {', '.join(PUBLISHED)}")
    return found
