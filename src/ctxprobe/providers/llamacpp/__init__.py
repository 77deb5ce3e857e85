"""The llama.cpp engine in process (``llamacpp:/path.gguf``; ``local``: the embedded
SmolLM2-135M-Instruct): the engine provider (``engine.py``), its factories, and llama.cpp's
own server started for a local model (``serve.py``, ``ctxprobe serve-local``). Two providers,
one engine: ``PROVIDER`` and ``LOCAL``."""

from __future__ import annotations

from ctxprobe.core.provider_declaration import ProviderDeclaration

_HERE = "ctxprobe.providers.llamacpp."

PROVIDER = ProviderDeclaration("llamacpp", _HERE + "factory:make_llamacpp", info=_HERE + "profile:LLAMACPP",
                               form="llamacpp:/path/model.gguf")
LOCAL = ProviderDeclaration("local", _HERE + "factory:make_llamacpp", info=_HERE + "profile:LOCAL", bare=True,
                            form="local (embedded SmolLM2-135M-Instruct)")
