"""Chunk sizes for ``decide --rag``: ``--chunks 256,512,1k`` in tokens, or chunks made from
a folder of the user's documents (``--chunks-from DOCS``: split at paragraphs, packed up
to each size, counted in the model's own tokens)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ctxprobe.errors import CtxprobeError

__all__ = ["DEFAULT_SIZES", "ChunkSet", "chunk_source", "doc_chunks", "paragraphs", "token_chunks"]

DEFAULT_SIZES = (256, 512, 1024)
_SUFFIXES = (".txt", ".md", ".markdown", ".rst", ".text")


@dataclass(frozen=True)
class ChunkSet:
    """One chunk size: the most tokens a chunk holds (what the retrieval depth is sized
    by), and the chunks themselves when made from the user's documents."""

    size: int  # the size asked (tokens)
    tokens: int  # the largest chunk's tokens (= size for --chunks)
    texts: tuple[str, ...] = field(default=(), repr=False)


def chunk_source(chunks_from: str | Path | None) -> str:
    """Where ``--confirm``'s chunks come from, as a stored confirmation names it: ``filler``
    (seeded filler) or the documents folder's absolute path."""
    return "filler" if chunks_from is None else str(Path(chunks_from).resolve())


def token_chunks(sizes: list[int]) -> list[ChunkSet]:
    return [ChunkSet(s, s) for s in sorted(set(sizes))]


def paragraphs(folder: str | Path) -> list[str]:
    """The paragraphs (text between blank lines) of every text file under ``folder``."""
    root = Path(folder)
    if not root.is_dir():
        raise CtxprobeError(f"--chunks-from {folder}: not a folder; give a folder of your documents as plain text "
                            f"({', '.join(_SUFFIXES)})")
    out: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in _SUFFIXES):
        text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        out += [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]
    if not out:
        raise CtxprobeError(f"--chunks-from {folder}: no text found (no {', '.join(_SUFFIXES)} file with a paragraph); "
                            "put your documents there as plain text, or give sizes with --chunks 256,512,1k")
    return out


def doc_chunks(paras: list[str], sizes: list[int], count: Callable[[str], int]) -> list[ChunkSet]:
    """Per size: the paragraphs packed in order into chunks of at most ``size`` tokens (a
    longer paragraph is a chunk of its own), measured with ``count``."""
    counts = [count(p) for p in paras]
    out = []
    for size in sorted(set(sizes)):
        chunks: list[str] = []
        current: list[str] = []
        used = 0
        for para, n in zip(paras, counts):
            if current and used + n > size:
                chunks.append("\n\n".join(current))
                current, used = [], 0
            current.append(para)
            used += n
        if current:
            chunks.append("\n\n".join(current))
        out.append(ChunkSet(size, max(count(c) for c in chunks), tuple(chunks)))
    return out
