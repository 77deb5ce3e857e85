"""OpenAI: tiktoken encodings, automatic prompt caching, the Batch API; prices and windows
from genai-prices (``price_library="openai"``)."""

from __future__ import annotations

from ctxprobe.core.catalog import BatchDiscount, CacheRules, ProviderInfo

PAGE = "https://platform.openai.com/docs/pricing"
#: The batch price of a model genai-prices has no batch variant for (gpt-5.3, codex and
#: search models): "a 50% discount" on the Batch API guide; written 2025-11-15, checked
#: 2026-12-04 against genai-prices 0.2.3, whose OpenAI batch variants halve input and output
#: in all but 2 of their tiers (gpt-3.5-turbo-1106, gpt-5.5-pro past 272K), cached input
#: often not.
_BATCH = 'platform.openai.com/docs/guides/batch: "a 50% discount", read 2025-11-15'

#: Model-name prefixes → encoding (first match; longer prefixes listed first). Source:
#: tiktoken's ``model.py`` MODEL_PREFIX_TO_ENCODING, extended with the newer families.
ENCODINGS = (
    ("gpt-4o", "tiktoken:o200k_base"), ("gpt-4.1", "tiktoken:o200k_base"), ("gpt-4.5", "tiktoken:o200k_base"),
    ("gpt-5", "tiktoken:o200k_base"), ("chatgpt-4o", "tiktoken:o200k_base"), ("o1", "tiktoken:o200k_base"),
    ("o3", "tiktoken:o200k_base"), ("o4", "tiktoken:o200k_base"), ("gpt-oss", "tiktoken:o200k_base"),
    ("gpt-4", "tiktoken:cl100k_base"), ("gpt-3.5", "tiktoken:cl100k_base"), ("gpt-35", "tiktoken:cl100k_base"),
)

INFO = ProviderInfo(
    default_tokenizer="tiktoken:o200k_base",  # every current OpenAI chat model uses it
    tokenizer_by_prefix=ENCODINGS,
    batch="ctxprobe.providers.openai.batch:OpenAIBatch",
    batch_discount=BatchDiscount(0.5, _BATCH),
    caching=(("", CacheRules("automatic", 1024, increment=128)),),
    reasoning="?reasoning_effort=low|medium|high (reasoning models), or ?thinking=N",
    price_library="openai",
    bare_hints=("gpt-", "o1", "o3", "o4", "chatgpt"),
    help="openai/MODEL",
    sources=(PAGE, "https://platform.openai.com/docs/guides/prompt-caching",
             "https://platform.openai.com/docs/guides/batch"),
)
