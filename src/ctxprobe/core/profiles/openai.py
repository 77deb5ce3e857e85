"""OpenAI: tiktoken encodings, automatic prompt caching, the Batch API, list prices."""

from __future__ import annotations

from ctxprobe.core.catalog import CacheRules, ModelInfo, Price, ProviderInfo

PAGE = "https://platform.openai.com/docs/pricing"
#: Written on 2025-11-15 and not read again from OpenAI's own page since (its stored copies
#: here are third parties'): stale until someone checks them there.
_OLD = f"{PAGE}: written 2025-11-15, not re-read from the provider's page"
_THIRD = (f"{PAGE} not read; deploybase.ai's copy of it (March 2026) lists the same prices; "
          "morphllm.com (June 2026) says gpt-5 and gpt-4o are no longer on the page")


def _p(inp: float, out: float, cached: float) -> tuple[Price, ...]:
    return (Price(inp, out, cached_input=cached, batch=0.5),)  # writes cost nothing extra


def _m(name: str, inp: float, out: float, cached: float, window: int, source: str = _OLD,
       as_of: str = "2025-11-15") -> ModelInfo:
    return ModelInfo(name, _p(inp, out, cached), window=window, as_of=as_of, source=source)


MODELS = (
    _m("gpt-5.1", 1.25, 10.00, 0.125, 400_000, as_of="2026-12-03",
       source=f"{PAGE} not read; koishiai.com's launch summary (Nov 2025) gives these prices and the 400K window"),
    _m("gpt-5", 1.25, 10.00, 0.125, 400_000, source=_THIRD, as_of="2026-12-03"),
    _m("gpt-5-mini", 0.25, 2.00, 0.025, 400_000, source=_THIRD, as_of="2026-12-03"),
    _m("gpt-5-nano", 0.05, 0.40, 0.005, 400_000, source=_THIRD, as_of="2026-12-03"),
    _m("gpt-4o", 2.50, 10.00, 1.25, 128_000, source=_THIRD, as_of="2026-12-03"),
    _m("gpt-4o-mini", 0.15, 0.60, 0.075, 128_000, source=_THIRD, as_of="2026-12-03"),
    _m("gpt-4.1", 2.00, 8.00, 0.50, 1_047_576, as_of="2026-12-03",
       source=f"{PAGE} not read; tokenmath.io (checked on it 2026-06-21) and deploybase.ai list the same"),
    _m("gpt-4.1-mini", 0.40, 1.60, 0.10, 1_047_576, as_of="2026-12-03",
       source=f"{PAGE} not read; tokenmath.io (checked on it 2026-06-21) and deploybase.ai list the same"),
    _m("gpt-4.1-nano", 0.10, 0.40, 0.025, 1_047_576, source=_THIRD, as_of="2026-12-03"),
    _m("o3", 2.00, 8.00, 0.50, 200_000, source=_THIRD, as_of="2026-12-03"),
    _m("o3-mini", 1.10, 4.40, 0.55, 200_000, source=_THIRD, as_of="2026-12-03"),
    _m("o4-mini", 1.10, 4.40, 0.275, 200_000, source=_THIRD, as_of="2026-12-03"),
)

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
    batch="ctxprobe.models.batch_openai:OpenAIBatch",
    caching=(("", CacheRules("automatic", 1024, increment=128)),),
    reasoning="?reasoning_effort=low|medium|high (reasoning models), or ?thinking=N",
    models=MODELS,
    bare_hints=("gpt-", "o1", "o3", "o4", "chatgpt"),
    help="openai/MODEL",
    sources=(PAGE, "https://platform.openai.com/docs/guides/prompt-caching",
             "https://platform.openai.com/docs/guides/batch"),
)
