"""The in-process llama.cpp engine's profiles: free (a price file may give a price), counted
by the model's own GGUF tokenizer (``local``: the embedded model's)."""

from __future__ import annotations

from ctxprobe.core.catalog import ProviderInfo

LLAMACPP = ProviderInfo(default_tokenizer="gguf:{name}", free=True, help="llamacpp:/path.gguf")
LOCAL = ProviderInfo(default_tokenizer="local", free=True, help="local")
