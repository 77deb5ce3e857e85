"""OpenAI-compatible servers (vLLM, SGLang, llama.cpp's server): ``openai-compat:NAME@URL``,
``vllm/NAME``, ``sglang/NAME``, ``openai-api/NAME``. Chat completions over HTTP (``api.py``),
each server's reasoning fields (``reasoning.py``), the window and slots it serves
(``served_window.py``), profile (counted by its own ``/tokenize``)."""

from __future__ import annotations

from ctxprobe.core.provider_declaration import ProviderDeclaration

_HERE = "ctxprobe.providers.openai_compat."

PROVIDER = ProviderDeclaration(
    "openai-compat", _HERE + "api:make_provider", info=_HERE + "profile:OPENAI_COMPAT",
    form="openai-compat:NAME@BASE_URL", reports_slots=True,
    served_as={"openai-compat": ("OPENAI_BASE_URL",), "openai-api": ("OPENAI_BASE_URL",),
               "vllm": ("VLLM_BASE_URL", "OPENAI_BASE_URL"),
               "sglang": ("SGLANG_BASE_URL", "OPENAI_BASE_URL")})
