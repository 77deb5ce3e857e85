"""ctxprobe's own provider factories, registered in :mod:`ctxprobe.core.builtins`:
``factory(ref, *, tokenizer, n_ctx, options) -> Provider``, the signature a plugin's
provider factory has too. SDK-backed providers import their module (and SDK) only here."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import Provider
from ctxprobe.spec.names import ModelRef
from ctxprobe.tokenizers.base import Tokenizer


def make_openai_compat(ref: ModelRef, **_: Any) -> Provider:
    from ctxprobe.models.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider.from_spec(ref)


def _sdk(module: str, cls: str, ref: ModelRef, options: dict[str, object] | None) -> Provider:
    """An SDK-backed provider made from the parsed reference (its name and options as parsed)."""
    provider_cls = getattr(importlib.import_module(f"ctxprobe.models.{module}"), cls)
    return provider_cls.from_ref(ref, dict(options or {}))


def make_openai(ref: ModelRef, *, options: dict[str, object] | None = None, **_: Any) -> Provider:
    return _sdk("openai_api", "OpenAIProvider", ref, options)


def make_anthropic(ref: ModelRef, *, options: dict[str, object] | None = None, **_: Any) -> Provider:
    return _sdk("anthropic_api", "AnthropicProvider", ref, options)


def make_gemini(ref: ModelRef, *, options: dict[str, object] | None = None, **_: Any) -> Provider:
    return _sdk("gemini_api", "GeminiProvider", ref, options)


def make_hf(ref: ModelRef, *, options: dict[str, object] | None = None, **_: Any) -> Provider:
    from ctxprobe.models.hf_local import HFLocalProvider

    return HFLocalProvider.from_spec(ref.spec, dict(options or {}))


def make_llamacpp(ref: ModelRef, *, tokenizer: Tokenizer, n_ctx: int | None = None, **_: Any) -> Provider:
    """``local`` = the embedded GGUF; ``llamacpp:/path.gguf`` = any GGUF, run in process."""
    from ctxprobe.embedded import embedded_model_path
    from ctxprobe.models.llamacpp import DEFAULT_N_CTX, LlamaCppProvider

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
