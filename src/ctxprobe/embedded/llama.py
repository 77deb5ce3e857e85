"""Import llama-cpp-python quietly.

llama.cpp logs warnings straight to stderr from C (e.g. "n_ctx_seq > n_ctx_train" when
only a vocabulary is loaded); they would break ctxprobe's one-line errors and clutter the
progress bar. We route llama.cpp's log through a callback that keeps only errors, and
only when CTXPROBE_LLAMA_LOG=1 asks for them.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

from ctxprobe.errors import MissingExtraError

_callback: Any = None


def import_llama_cpp(purpose: str) -> Any:
    global _callback
    try:
        import llama_cpp
    except ImportError:
        raise MissingExtraError("llama-cpp-python", "local", purpose) from None
    if _callback is None:
        show = os.environ.get("CTXPROBE_LLAMA_LOG") == "1"

        @llama_cpp.llama_log_callback
        def _log(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
            if show:
                print(text.decode("utf-8", "replace"), end="", file=sys.stderr)

        _callback = _log  # keep a reference: C holds only a raw pointer
        llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))
    return llama_cpp
