"""A folder of the user's documents, read (``.txt`` / ``.md``, searched recursively, hidden
folders skipped; each named by its path relative to the folder), and the question paragraph
a document case asks: what the ``documents`` family builds from, and what
``draft-questions`` (:mod:`ctxprobe.natural`) drafts and checks questions over."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.errors import CtxprobeError

#: The question paragraph of a short-answer document case.
QUESTION = "Question: {question} Answer as briefly as possible."
SUFFIXES = (".txt", ".md")


def prepare_document(text: str) -> str:
    """Blank lines → single newlines, so a document never splits the prompt's paragraphs."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    return "\n".join(line for line in lines if line.strip())


def _document_files(root: Path) -> list[Path]:
    return sorted((p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(root).parts)),
                  key=lambda p: p.relative_to(root).as_posix())


def read_documents(root: Path) -> dict[str, str]:
    """Every document under ``root``: its relative name → its prepared text (a one-line error
    for a missing folder, an unreadable file or a folder without documents)."""
    shown = repr(str(root))
    if not root.is_dir():
        raise CtxprobeError(f"documents folder {shown} does not exist or is not a folder; pass docs: a folder of .txt/.md files")
    docs: dict[str, str] = {}
    for path in _document_files(root):
        try:
            docs[path.relative_to(root).as_posix()] = prepare_document(path.read_text(encoding="utf-8", errors="replace"))
        except OSError as err:
            raise CtxprobeError(f"cannot read document {str(path)!r}: {err.strerror or err}") from None
    if not docs:
        raise CtxprobeError(f"documents folder {shown} has no .txt or .md files")
    return docs
