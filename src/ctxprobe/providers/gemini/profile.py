"""Gemini: counted by its API, implicit or explicit caches, Batch Mode; prices, tiers and
windows from genai-prices (``price_library="google"``), but for the explicit caches'
storage price, which the library does not have."""

from __future__ import annotations

from ctxprobe.core.catalog import BatchDiscount, CacheRules, ModelInfo, ProviderInfo

PAGE = "https://ai.google.dev/gemini-api/docs/pricing"
CACHING = "https://ai.google.dev/gemini-api/docs/caching"
#: The batch price of a model genai-prices has no batch variant for (Gemini 3.5 / 3.7
#: Flash, 3 Pro Preview): "50% of the standard cost" on the Batch Mode page (the Gemini
#: API's launch post: "priced at 50% less than the standard rate for a given model");
#: written 2025-11-15, checked 2026-12-04 against genai-prices 0.2.3, whose Google batch
#: variants all halve input and output (cached input often not).
_BATCH = 'ai.google.dev/gemini-api/docs/batch-mode: "50% of the standard cost", read 2025-11-15'
#: ctxprobe's own notes, not prices: prices and windows are genai-prices' (google).
MODELS = (
    ModelInfo("gemini-2.0-flash", retired="retired by Google; use gemini-2.5-flash or newer"),
    ModelInfo("gemini-1.5-flash", retired="retired by Google; use gemini-2.5-flash or newer"),
    ModelInfo("gemini-1.5-pro", retired="retired by Google; use gemini-2.5-pro or newer"),
)

INFO = ProviderInfo(
    default_tokenizer="approx",  # no published tokenizer; gemini-count:MODEL asks the API
    remote_counter="gemini-count:{name}",
    batch="ctxprobe.providers.gemini.batch:GeminiBatch",
    batch_discount=BatchDiscount(0.5, _BATCH),
    # minimums from the caching page (stored copy, last updated 2026-07-07: 2.5 Pro and
    # Flash 2,048, 3.x Pro 4,096; its 2026-05-07 version: 3 Flash Preview 1,024)
    caching=(
        (r"gemini-3(\.\d+)?-pro", CacheRules("automatic", 4096)),
        # Gemini 3.5 Flash 4,096: the caching page's table (a copy of ai.google.dev/gemini-api/docs/caching
        # dated 2026-06-26 on techdevnotes.com, read 2026-12-03); 3.6-3.8 Flash taken to be the same
        # (the copies of the caching page read here predate them: an assumption until the page lists them)
        (r"gemini-3\.[5-8]-flash(?!-lite)", CacheRules("automatic", 4096)),
        (r"gemini-3(\.\d+)?-flash", CacheRules("automatic", 1024)),
        (r"gemini-2\.5", CacheRules("automatic", 2048)),
        (r"gemini-2\.0", CacheRules("explicit", 4096)),
        (r"gemini-1\.5", CacheRules("explicit", 32768)),
    ),
    explicit_caching=True,
    reasoning="?thinking=N (thinking cannot be turned off on the Pro models)",
    models=MODELS,
    price_library="google",
    # USD per 1M cached tokens per hour of an explicit cache (genai-prices has no storage price).
    # Written 2026-12-03 from the entries ctxprobe had: Pro $4.50 as quoted in discuss.ai.google.dev
    # threads from the pricing page; Flash $1.00 from the pricing page as written 2025-11-15, not re-read.
    cache_storage=((r"gemini-[\d.]+-pro", 4.50, f"{PAGE} as quoted in discuss.ai.google.dev threads"),
                   (r"gemini-[\d.]+-flash", 1.00, f"{PAGE}, written 2025-11-15, not re-read")),
    bare_hints=("gemini",),
    help="gemini/MODEL",
    sources=(PAGE, CACHING, "https://ai.google.dev/gemini-api/docs/batch-mode"),
)
