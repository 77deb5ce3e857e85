"""``gguf:/path/model.gguf``: llama.cpp's own tokenizer and chat template for any GGUF.

The GGUF is loaded by llama.cpp's native server in process (the prebuilt ``xllamacpp``
wheel, :mod:`ctxprobe.embedded.xllama`), bound to 127.0.0.1 on a free port, and counted
through its ``/apply-template`` and ``/tokenize`` routes — the exact ids llama.cpp's
server (and the in-process ``llamacpp:`` model) sees: the template rendered by
llama.cpp itself, BOS added per the vocabulary, special-token text parsed. Plain text is
tokenized with neither. Counts are cached and sent concurrently
(:class:`~ctxprobe.tokenizers.endpoint.EndpointTokenizer`). The trained context and the
template's hash come from the file's metadata, read without loading it
(:mod:`ctxprobe.embedded.gguf_meta`).
"""

from __future__ import annotations

from pathlib import Path

from ctxprobe.embedded.gguf_meta import read_gguf_metadata
from ctxprobe.embedded.xllama import shared_engine
from ctxprobe.tokenizers.chat_template import template_hash
from ctxprobe.tokenizers.endpoint import EndpointTokenizer

#: The tokenizing engine's window: /tokenize and /apply-template need no KV cache to speak of.
TOKENIZER_N_CTX = 512


class XLlamaTokenizer(EndpointTokenizer):
    """A GGUF's tokenizer, counted by llama.cpp's server running in this process."""

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        self.path = Path(path).expanduser()
        meta = read_gguf_metadata(self.path)  # a bad file fails here, in one line, before loading
        engine = shared_engine(self.path, TOKENIZER_N_CTX, purpose="GGUF tokenizers")
        super().__init__(engine.base_url, kind="llama-server", name=name or f"gguf:{path}")
        self._engine = engine  # kept alive with the tokenizer
        source = meta.get("tokenizer.chat_template")
        self._template_source = source if isinstance(source, str) and source else None
        #: Where the chat template comes from (llama.cpp falls back to ChatML without one).
        self.template_source = ("gguf metadata tokenizer.chat_template" if self._template_source
                                else "llama.cpp's fallback (the GGUF has no chat template)")
        arch = meta.get("general.architecture", "")
        trained = meta.get(f"{arch}.context_length")
        self._trained = int(trained) if isinstance(trained, int) and trained > 0 else None

    def __repr__(self) -> str:
        return f"XLlamaTokenizer({self.name!r})"

    @property
    def chat_template_hash(self) -> str | None:
        if self._template_source:
            return template_hash(self._template_source)
        return super().chat_template_hash  # a fingerprint of the fallback's ids

    @property
    def trained_context(self) -> int | None:
        return self._trained
