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
#: Share of a file's bytes that may fail to decode as UTF-8 (a stray Latin-1 character in
#: otherwise good text); past it the file is refused as not text. Sentences holding an
#: undecodable byte are dropped either way, so no replacement character reaches a prompt.
MAX_INVALID_SHARE = 0.01
_REPLACEMENT = "\ufffd"

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


def invalid_utf8_bytes(data: bytes) -> int:
    """Bytes of ``data`` that are not part of valid UTF-8 (each surrogate escape is one)."""
    decoded = data.decode("utf-8", errors="surrogateescape")
    return sum(1 for ch in decoded if "\udc80" <= ch <= "\udcff")


def not_text_reason(data: bytes) -> str | None:
    """Why ``data`` is not a text file (None when it is): NUL bytes, or more than
    ``MAX_INVALID_SHARE`` of its bytes outside UTF-8."""
    if b"\x00" in data:
        return "contains NUL bytes (binary, or UTF-16)"
    bad = invalid_utf8_bytes(data)
    if data and bad > MAX_INVALID_SHARE * len(data):
        return f"{bad} of {len(data)} bytes ({bad / len(data):.1%}) are not UTF-8"
    return None


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
    refused: list[str] = []
    for path in _source_files(root):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        why = not_text_reason(data)
        if why is not None:
            refused.append(f"{path.relative_to(root).as_posix()!r} {why}")
            continue
        text = data.decode("utf-8", errors="replace")
        readable += 1
        is_md = path.suffix.lower() == ".md"
        paragraphs = _markdown_paragraphs(text) if is_md else _plain_paragraphs(text)
        for paragraph in paragraphs:
            sentences.extend(s for s in split_sentences(paragraph)
                             if is_clean_sentence(s) and _REPLACEMENT not in s)
    if refused:
        more = f" and {len(refused) - 3} more" if len(refused) > 3 else ""
        raise CtxprobeError(
            f"haystack directory {shown} holds files that are not text: {'; '.join(refused[:3])}{more}; "
            "remove them or convert them to UTF-8 text"
        )
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
