"""Anthropic (``anthropic:MODEL[?thinking=N]``): the Messages API (``api.py``), what each
Claude takes (``rules.py``), options, ``cache_control`` breakpoints (``caching.py``), Message
Batches, the counting API as a tokenizer (``count.py``, ``anthropic-count:MODEL``), profile."""

from __future__ import annotations

from ctxprobe.core.provider_declaration import ProviderDeclaration

_HERE = "ctxprobe.providers.anthropic."

PROVIDER = ProviderDeclaration(
    "anthropic", _HERE + "api:make_provider", info=_HERE + "profile:INFO",
    form="anthropic:MODEL[?thinking=N]", check=_HERE + "options:check_anthropic",
    tokenizers={"anthropic-count": _HERE + "count:anthropic_count"})
