"""An OpenAI-compatible server's profile (vLLM, SGLang, llama.cpp's server): no list price (a
price file may give one); its own server counts (exact), by asking it: prefixes are
estimated instead."""

from __future__ import annotations

from ctxprobe.core.catalog import ProviderInfo

OPENAI_COMPAT = ProviderInfo(default_tokenizer="endpoint:{base_url}?model={name_quoted}",
                             remote_counter="endpoint:{base_url}?model={name_quoted}",
                             reasoning="?thinking=N where the server has a reasoning parser",
                             help="vllm/NAME, sglang/NAME or openai-api/NAME with --base-url | openai-compat:NAME@URL")
