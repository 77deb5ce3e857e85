"""Filler from the user's own text: a directory of ``.txt`` and ``.md`` files.

Teams often want haystacks that look like their production prompts. The directory is read
once per process (cached by resolved path), split into sentences, and stripped of any
sentence that could be mistaken for a needle (see :mod:`ctxprobe.haystack.sanitize`). Each
case then cycles over the sentences from a seeded offset, so different cases see different
stretches of text while staying reproducible.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterator
from pathlib import Path

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.sanitize import is_clean_sentence, split_sentences

SUFFIXES = (".txt", ".md")
MIN_SENTENCES = 20

_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_BLOCK_START = re.compile(r"^\s*(#{1,6}\s|>|[-*+]\s|\d+[.)]\s)")
_MD_MARKER = re.compile(r"^\s*(#{1,6}\s+|(>\s*)+|[-*+]\s+|\d+[.)]\s+)")


def _markdown_paragraphs(text: str) -> list[str]:
    """Drop code blocks and tables; headings and list items become their own paragraphs,
    so a title without a full stop is not glued onto the sentence after it."""
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or line.lstrip().startswith("|"):
            continue
        if not line.strip() or _MD_BLOCK_START.match(line):
            if current:
                paragraphs.append(" ".join(current))
                current = []
        stripped = _MD_MARKER.sub("", line).strip()
        if stripped:
            current.append(stripped)
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def _plain_paragraphs(text: str) -> list[str]:
    return re.split(r"\n\s*\n", text)


def _source_files(root: Path) -> list[Path]:
    """Sorted by relative POSIX path so the order is the same on every platform; hidden
    directories (.git, .venv, ...) are skipped because they hold tooling, not prose."""
    found = [
        p
        for p in root.rglob("*")
        if p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
        and p.is_file()
    ]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


@functools.lru_cache(maxsize=None)
def _load_sentences(resolved: str) -> tuple[str, ...]:
    """All clean sentences under a directory, in file order; errors are not cached."""
    root = Path(resolved)
    shown = repr(resolved)  # repr keeps the message on one line whatever the path holds
    if not root.exists():
        raise CtxprobeError(
            f"haystack directory {shown} does not exist; pass a directory of .txt/.md "
            "files or 'prose'"
        )
    if not root.is_dir():
        raise CtxprobeError(
            f"haystack {shown} is not a directory; pass a directory of .txt/.md files "
            "or 'prose'"
        )
    sentences: list[str] = []
    readable = 0
    for path in _source_files(root):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        readable += 1
        is_md = path.suffix.lower() == ".md"
        paragraphs = _markdown_paragraphs(text) if is_md else _plain_paragraphs(text)
        for paragraph in paragraphs:
            sentences.extend(s for s in split_sentences(paragraph) if is_clean_sentence(s))
    if readable == 0:
        raise CtxprobeError(
            f"haystack directory {shown} has no readable .txt or .md files; add some or "
            "use 'prose'"
        )
    if len(sentences) < MIN_SENTENCES:
        raise CtxprobeError(
            f"haystack directory {shown} has only {len(sentences)} usable sentences; add "
            f"more text (at least {MIN_SENTENCES} needed)"
        )
    return tuple(sentences)


def _cycle_from(sentences: tuple[str, ...], start: int) -> Iterator[str]:
    n = len(sentences)
    i = start
    while True:
        yield sentences[i]
        i += 1
        if i == n:
            i = 0


def corpus_sentences(directory: str | Path, seed: int) -> Iterator[str]:
    """Cycle forever over the clean sentences of a directory, from a seeded offset.

    Not a generator function on purpose: a bad directory raises here, at the call, rather
    than at the first ``next()`` deep inside case building.
    """
    sentences = _load_sentences(str(Path(directory).expanduser().resolve()))
    start = random.Random(seed).randrange(len(sentences))
    return _cycle_from(sentences, start)
