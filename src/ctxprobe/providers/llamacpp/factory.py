"""The llama.cpp engine's factories: ``llamacpp:/path.gguf`` (any GGUF) and ``local`` (the
embedded model), both run in process by :mod:`.engine`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import Provider
from ctxprobe.spec.names import ModelRef
from ctxprobe.tokenizers.base import Tokenizer


def make_llamacpp(ref: ModelRef, *, tokenizer: Tokenizer, n_ctx: int | None = None, **_: Any) -> Provider:
    """``local`` = the embedded GGUF; ``llamacpp:/path.gguf`` = any GGUF, run in process."""
    from ctxprobe.embedded import embedded_model_path
    from ctxprobe.providers.llamacpp.engine import DEFAULT_N_CTX, LlamaCppProvider

    if ref.bare:
        path = embedded_model_path()
    else:
        path = Path(ref.name).expanduser()
        if not path.is_file():
            raise CtxprobeError(f"no GGUF file at {path}: give llamacpp:/path/to/model.gguf")
    from ctxprobe.embedded.gguf_meta import gguf_trained_context

    # The trained window (GGUF metadata) is the default runtime window: positions past it
    # were never trained, so lengths beyond it need --allow-beyond-window (which passes n_ctx).
    trained = gguf_trained_context(path)
    return LlamaCppProvider(ref.spec, path, tokenizer, n_ctx=n_ctx or trained or DEFAULT_N_CTX,
                            trained_context=trained)
