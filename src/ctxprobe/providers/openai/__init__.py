"""OpenAI (``openai:MODEL[?reasoning_effort=low]``): Chat Completions and the Responses API
(``api.py``, ``responses.py``: which models take which request, effort levels), options,
Batch API, profile (prices from genai-prices, caching by ``prompt_cache_key``), the
counting API as a tokenizer (``count.py``, ``openai-count:MODEL``)."""

from __future__ import annotations

from ctxprobe.core.provider_declaration import ProviderDeclaration

_HERE = "ctxprobe.providers.openai."

PROVIDER = ProviderDeclaration(
    "openai", _HERE + "api:make_provider", info=_HERE + "profile:INFO",
    form="openai:MODEL[?reasoning_effort=low&thinking=N]", check=_HERE + "options:check_openai",
    url_fallback="openai-compat", tokenizers={"openai-count": _HERE + "count:openai_count"})
