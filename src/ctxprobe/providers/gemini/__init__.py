"""Gemini (``gemini:MODEL[?thinking=N]``, also ``google/``): the Gen AI SDK's requests
(``api.py``), thinking budgets and levels (``thinking.py``), explicit caches (``cache.py``),
Batch Mode, the counting API as a tokenizer (``count.py``, ``gemini-count:MODEL``), profile."""

from __future__ import annotations

from ctxprobe.core.provider_declaration import ProviderDeclaration

_HERE = "ctxprobe.providers.gemini."

PROVIDER = ProviderDeclaration(
    "gemini", _HERE + "api:make_provider", info=_HERE + "profile:INFO", aliases=("google",),
    form="gemini:MODEL[?thinking=N]", check=_HERE + "options:check_gemini",
    tokenizers={"gemini-count": _HERE + "count:gemini_count"})
