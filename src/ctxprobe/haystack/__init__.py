"""Haystack filler sources: neutral sentences that long-context prompts are padded with.

Every source is an infinite, seeded iterator of single-line sentences; the packer takes as
many as a token budget needs and the task inserts its needles between them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ctxprobe.haystack.corpus import corpus_sentences
from ctxprobe.haystack.prose import prose_sentences
from ctxprobe.haystack.sanitize import is_clean_sentence, split_sentences

__all__ = [
    "corpus_sentences",
    "filler_source",
    "is_clean_sentence",
    "prose_sentences",
    "split_sentences",
]


def filler_source(haystack: str | Path | None, seed: int) -> Iterator[str]:
    """The filler a spec asks for: None or "prose" is built-in prose, anything else a
    directory of the user's .txt/.md files (use "./prose" for a directory named prose).

    A bad directory raises :class:`~ctxprobe.errors.CtxprobeError` here, not on first use.
    """
    if haystack is None or haystack == "prose":
        return prose_sentences(seed)
    return corpus_sentences(haystack, seed)
