"""A transformers model in process (``hf:/path/to/model-folder[?dtype=float32&thinking=N]``):
the provider (``engine.py``), its options, profile (counted by the folder's tokenizer)."""

from __future__ import annotations

from ctxprobe.core.provider_declaration import ProviderDeclaration

_HERE = "ctxprobe.providers.hf."

PROVIDER = ProviderDeclaration("hf", _HERE + "engine:make_provider", info=_HERE + "profile:HF",
                               form="hf:/path/to/model-folder[?dtype=float32&thinking=N]")
