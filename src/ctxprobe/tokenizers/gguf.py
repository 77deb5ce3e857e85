"""Tokenizer and chat template read from a GGUF file, tokenized by llama.cpp itself.

A GGUF carries its vocabulary and chat template, so counting with llama.cpp's own
tokenizer gives the exact ids a llama.cpp-based server (or the in-process provider) sees.

BOS handling in :meth:`GGUFTokenizer.encode_chat` follows llama.cpp's own server: render
the template, and if the vocabulary's ``add_bos`` flag (GGUF ``tokenizer.ggml.add_bos_token``,
or llama.cpp's default for the vocab type when the key is absent) is set, prepend BOS unless
the rendered text already starts with the BOS text. llama.cpp does exactly this in
``common/chat.cpp`` (it strips a leading BOS text when ``add_bos`` is set, then the server
tokenizes with ``add_special=true, parse_special=true``), so the model gets BOS exactly once.
llama-cpp-python's ``Jinja2ChatFormatter`` instead tokenizes the rendered text with
``add_bos=False, special=True`` and never adds BOS. The two agree whenever ``add_bos`` is
off (SmolLM2; checked in the tests) or the template prints ``bos_token`` itself; they differ
by one leading BOS only for an ``add_bos`` model whose template omits it. The in-process
provider feeds ``encode_chat`` ids to the model directly, so we follow the model's metadata
(as llama.cpp's server does) rather than that formatter's quirk. With no template in the
file we fall back to ChatML, as llama.cpp's server does (llama-cpp-python picks 'llama-2').
"""

from __future__ import annotations

import array
import atexit
import ctypes
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.embedded.llama import import_llama_cpp
from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers.base import Message
from ctxprobe.tokenizers.chat_template import CHATML_TEMPLATE, ChatTemplate, prepend_bos


@dataclass
class _Vocab:
    """A vocab-only llama.cpp model plus what we read from its metadata, shared per path."""

    llama: Any  # llama_cpp.Llama, kept alive: the vocab pointer below belongs to it
    vocab: Any  # llama_vocab_p
    template: ChatTemplate
    template_source: str
    bos_id: int
    add_bos: bool
    trained_context: int | None


_LOADED: dict[str, _Vocab] = {}
#: Largest tokenize buffer (in ids) kept per thread between calls.
_KEEP_BUFFER = 1 << 16
_LOAD_LOCK = threading.Lock()


@atexit.register
def _close_all() -> None:
    """Free cached models while llama_cpp still exists: Llama.__del__ at interpreter
    teardown would otherwise call into an already-dismantled module and print tracebacks."""
    with _LOAD_LOCK:
        for loaded in _LOADED.values():
            loaded.llama.close()
        _LOADED.clear()


def _import_llama_cpp() -> Any:
    return import_llama_cpp("GGUF tokenizers")


def _token_text(llama: Any, token_id: int) -> str:
    """A special token's text as llama-cpp-python passes it to chat templates."""
    if token_id < 0:
        return ""
    return llama._model.token_get_text(token_id)


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _load(path: Path) -> _Vocab:
    """Load (once per resolved path) the vocabulary and template of a GGUF file."""
    key = str(path.resolve())
    with _LOAD_LOCK:
        cached = _LOADED.get(key)
        if cached is not None:
            return cached
        llama_cpp = _import_llama_cpp()
        if not path.is_file():
            raise CtxprobeError(f"GGUF tokenizer file not found: {path}")
        try:
            # llama.cpp's C-side log (e.g. a bogus "n_ctx_train (0)" warning for the
            # throwaway context of a vocab-only load) is routed away by import_llama_cpp.
            llama = llama_cpp.Llama(model_path=key, vocab_only=True, verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise CtxprobeError(f"cannot read a GGUF vocabulary from {path}: {exc}") from None
        meta: dict[str, str] = dict(llama.metadata)
        bos_id, eos_id = llama.token_bos(), llama.token_eos()
        source = meta.get("tokenizer.chat_template")
        origin = "gguf metadata tokenizer.chat_template"
        if not source:
            source, origin = CHATML_TEMPLATE, "ChatML fallback (the GGUF has no chat template)"
        template = ChatTemplate(
            source=source,
            bos_token=_token_text(llama, bos_id),
            eos_token=_token_text(llama, eos_id),
            origin=origin,
        )
        arch = meta.get("general.architecture", "")
        loaded = _Vocab(
            llama=llama,
            vocab=llama._model.vocab,
            template=template,
            template_source=origin,
            bos_id=bos_id,
            add_bos=bool(llama._model.add_bos_token()) and bos_id >= 0,
            trained_context=_int_or_none(meta.get(f"{arch}.context_length")),
        )
        _LOADED[key] = loaded
        return loaded


def gguf_trained_context(path: str | Path) -> int | None:
    """The context length a GGUF's model was trained with (``<arch>.context_length``)."""
    return _load(Path(path).expanduser()).trained_context


class GGUFTokenizer:
    """llama.cpp's tokenizer and the GGUF's chat template (see module docstring for BOS)."""

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        self.path = Path(path).expanduser()
        self.name = name or f"gguf:{path}"
        loaded = _load(self.path)
        self._llama_cpp = _import_llama_cpp()
        self._vocab = loaded.vocab
        self._keepalive = loaded.llama
        self.template = loaded.template
        #: Where the chat template came from (metadata, or the ChatML fallback).
        self.template_source = loaded.template_source
        self.bos_id = loaded.bos_id
        #: Whether ``encode_chat`` prepends BOS (the vocabulary's own ``add_bos`` flag).
        self.add_bos = loaded.add_bos
        self._trained_context = loaded.trained_context
        # llama_tokenize is not re-entrant on a shared output buffer; one per thread.
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"GGUFTokenizer({self.name!r})"

    # -- raw llama.cpp calls -------------------------------------------------------
    def _buffer(self, size: int) -> Any:
        if size > _KEEP_BUFFER:  # a long prompt's buffer (4 bytes per byte of text) is not kept
            return (self._llama_cpp.llama_token * size)()
        buf = getattr(self._local, "buf", None)
        if buf is None or len(buf) < size:
            buf = (self._llama_cpp.llama_token * max(size, 4096))()
            self._local.buf = buf
        return buf

    def _tokenize(self, text: str, special: bool) -> list[int]:
        data = text.encode("utf-8")
        # Ids rarely outnumber bytes (each token covers >= 1 byte; SPM may add a space).
        size = len(data) + 1
        buf = self._buffer(size)
        n = self._llama_cpp.llama_tokenize(self._vocab, data, len(data), buf, size, False, special)
        if n < 0:  # more ids than bytes (a space prefix): llama.cpp reports the size needed
            size = -n
            buf = self._buffer(size)
            n = self._llama_cpp.llama_tokenize(
                self._vocab, data, len(data), buf, size, False, special
            )
        if n < 0:
            raise CtxprobeError(f"llama.cpp failed to tokenize {len(data)} bytes (code {n})")
        return buf[:n]

    def _count(self, data: bytes) -> int:
        """Count without copying ids: llama_tokenize reports -n when given no room."""
        if not data:
            return 0
        n = self._llama_cpp.llama_tokenize(self._vocab, data, len(data), None, 0, False, False)
        return -n if n < 0 else n

    # -- Tokenizer protocol ----------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """Plain text ids: no BOS, and special-token text is treated as ordinary text."""
        return self._tokenize(text, special=False)

    def count(self, text: str) -> int:
        return self._count(text.encode("utf-8"))

    def count_many(self, texts: list[str]) -> list[int]:
        """Counts of many texts; the case builder's hot path (one C call per text)."""
        count = self._count
        return [count(t.encode("utf-8")) for t in texts]

    def _piece_bytes(self, ids: list[int]) -> list[int]:
        """Bytes of text each id stands for (plain text, no special rendering); cached."""
        table: dict[int, int] = self.__dict__.setdefault("_piece_len", {})
        missing = [i for i in set(ids) if i not in table]
        if missing:
            buf = (ctypes.c_char * 256)()
            for i in missing:
                n = self._llama_cpp.llama_token_to_piece(self._vocab, i, buf, 256, 0, False)
                table[i] = n if n >= 0 else -1
        return [table[i] for i in ids]

    def count_segments(self, texts: list[str]) -> list[int]:
        """Counts of many short texts from one llama.cpp call over their concatenation: each
        token is attributed to the text its bytes fall in. A text some token straddles, a
        text that ends in whitespace (``\\s+(?!\\S)`` looks ahead) or follows one, and every
        text of a vocabulary whose pieces do not add up to the text's bytes is counted on
        its own. Checked against ``count_many`` on random text (tests/tokenizers)."""
        data = [t.encode("utf-8") for t in texts]
        joined = b"".join(data)
        if len(texts) < 8 or not joined:
            return self.count_many(texts)
        ids = self._tokenize(joined.decode("utf-8"), special=False)
        lens = self._piece_bytes(ids)
        if min(lens, default=0) < 0 or sum(lens) != len(joined):
            return self.count_many(texts)
        ends, acc = [], 0
        for d in data:
            acc += len(d)
            ends.append(acc)
        counts = [0] * len(texts)
        recount: set[int] = set()
        after_space = False  # the last non-empty text ended in whitespace
        for i, t in enumerate(texts):
            if t and (after_space or t[-1].isspace()):
                recount.add(i)
            if t:
                after_space = t[-1].isspace()
        seg, pos = 0, 0
        for length in lens:
            end = pos + length
            while ends[seg] <= pos:
                seg += 1
            if end > ends[seg]:  # the token crosses into the next text(s)
                last = seg
                while ends[last] < end:
                    last += 1
                recount.update(range(seg, last + 1))
            else:
                counts[seg] += 1
            pos = end
        if recount:
            order = sorted(recount)
            for i, c in zip(order, self.count_many([texts[i] for i in order])):
                counts[i] = c
        return counts

    def render_chat(self, messages: list[Message]) -> str:
        return self.template.render(messages, add_generation_prompt=True)

    def encode_chat(self, messages: list[Message]) -> list[int]:
        """Ids of the templated prompt: special tokens parsed, BOS once if the model wants it."""
        rendered = self.render_chat(messages)
        ids = self._tokenize(rendered, special=True)
        return prepend_bos(ids, rendered, self.template, self.add_bos, self.bos_id)

    def count_chat(self, messages: list[Message]) -> int:
        return len(self.encode_chat(messages))

    def encode_chat_compact(self, messages: list[Message]) -> array.array[int]:
        """``encode_chat`` as a 4-byte ``array``, written by llama.cpp straight into it: no
        list of Python ints (36 MB for a 1M-token prompt) and no separate buffer. Build
        workers use it (see :func:`ctxprobe.haystack.packer.compact_ids`)."""
        rendered = self.render_chat(messages)
        data = rendered.encode("utf-8")
        size = len(data) + 1
        for _ in range(2):
            ids = array.array("i", [0]) * size
            view = (self._llama_cpp.llama_token * size).from_buffer(ids)
            n = self._llama_cpp.llama_tokenize(self._vocab, data, len(data), view, size, False, True)
            del view
            if n >= 0:
                del ids[n:]
                return prepend_bos(ids, rendered, self.template, self.add_bos, self.bos_id)
            size = -n
        raise CtxprobeError(f"llama.cpp failed to tokenize {len(data)} bytes (code {n})")

    def decode(self, ids: list[int]) -> str:
        """Text of ids (special tokens shown), for debugging and needle positions."""
        return self._keepalive.detokenize(ids, special=True).decode("utf-8", errors="replace")

    @property
    def chat_template_hash(self) -> str | None:
        return self.template.hash

    @property
    def trained_context(self) -> int | None:
        return self._trained_context
