"""Tokenizer backends behind one protocol, resolved from the spec's tokenizer string.

Accepted forms: ``local`` (the embedded SmolLM2 GGUF), ``gguf:/path/model.gguf``,
``hf:/path/to/folder-or-tokenizer.json``, or a bare path (a ``.gguf`` file, a folder
holding ``tokenizer.json``, or a ``tokenizer.json`` file). Backends import their heavy
libraries lazily, so importing this package costs nothing.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers.base import Message, SupportsCountMany, Tokenizer

__all__ = ["Message", "SupportsCountMany", "Tokenizer", "count_many", "resolve_tokenizer"]

ACCEPTED_FORMS = "'local', 'gguf:/path/model.gguf', 'hf:/path/to/tokenizer-folder', or a path"

_CACHE: dict[str, Tokenizer] = {}
_CACHE_LOCK = threading.Lock()


def _bad(name: str, why: str) -> CtxprobeError:
    return CtxprobeError(f"cannot use tokenizer {name!r}: {why}; use {ACCEPTED_FORMS}")


def _build(name: str) -> Tokenizer:
    if not name:
        raise _bad(name, "empty name")
    scheme, sep, rest = name.partition(":")
    if name == "local":
        from ctxprobe.embedded import embedded_model_path
        from ctxprobe.tokenizers.gguf import GGUFTokenizer

        return GGUFTokenizer(embedded_model_path(), name="local")
    if sep and scheme == "gguf":
        from ctxprobe.tokenizers.gguf import GGUFTokenizer

        path = Path(rest).expanduser()
        if not path.is_file():
            raise _bad(name, f"no file {rest}")
        return GGUFTokenizer(path, name=name)
    if sep and scheme == "hf":
        from ctxprobe.tokenizers.hf import HFTokenizer

        path = Path(rest).expanduser()
        if not (path.is_file() or (path / "tokenizer.json").is_file()):
            raise _bad(name, f"no tokenizer.json at {rest}")
        return HFTokenizer(path, name=name)
    # A bare path; "C:\\..." style drive letters are paths, other "x:" prefixes are schemes.
    if sep and len(scheme) > 1 and not Path(name).expanduser().exists():
        raise _bad(name, f"unknown scheme '{scheme}:'")
    path = Path(name).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        from ctxprobe.tokenizers.gguf import GGUFTokenizer

        return GGUFTokenizer(path, name=name)
    if (path.is_file() and path.name.endswith(".json")) or (path / "tokenizer.json").is_file():
        from ctxprobe.tokenizers.hf import HFTokenizer

        return HFTokenizer(path, name=name)
    if path.exists():
        raise _bad(name, "not a .gguf file, a tokenizer.json, or a folder holding one")
    raise _bad(name, "no such file or folder")


def resolve_tokenizer(name: str) -> Tokenizer:
    """The tokenizer a spec names; instances are cached by name (loading is not free)."""
    name = name.strip()
    with _CACHE_LOCK:
        cached = _CACHE.get(name)
    if cached is not None:
        return cached
    tokenizer = _build(name)
    with _CACHE_LOCK:
        return _CACHE.setdefault(name, tokenizer)


def count_many(tokenizer: Tokenizer, texts: list[str]) -> list[int]:
    """Batched counts when the backend offers them, else one ``count`` per text."""
    if isinstance(tokenizer, SupportsCountMany):
        return tokenizer.count_many(texts)
    return [tokenizer.count(t) for t in texts]
