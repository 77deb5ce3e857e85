"""Gemini: counted by its API, implicit or explicit caches, Batch Mode, list prices with
the long-prompt tier (prompts over 200K tokens) of the Pro models."""

from __future__ import annotations

from ctxprobe.core.catalog import CacheRules, ModelInfo, Price, ProviderInfo

PAGE = "https://ai.google.dev/gemini-api/docs/pricing"
CACHING = "https://ai.google.dev/gemini-api/docs/caching"
TODAY = "2026-12-03"
WINDOW = 1_048_576


def _tier(inp: float, out: float, cached: float, storage: float, above: int = 0) -> Price:
    # an explicit cache's creation is billed as input tokens, its storage by the hour
    return Price(inp, out, cached_input=cached, cache_write=inp, cache_storage=storage, batch=0.5, above=above)


MODELS = (
    ModelInfo("gemini-2.5-pro", (_tier(1.25, 10.00, 0.125, 4.50), _tier(2.50, 15.00, 0.25, 4.50, above=200_000)),
              window=WINDOW, as_of=TODAY,
              source=f"{PAGE} not read itself; quoted in discuss.ai.google.dev threads (cache $0.125 / $0.25 "
                     "over 200K, storage $4.50) and deploybase.ai (March 2026: $1.25/$10, > 200K $2.50/$15)"),
    ModelInfo("gemini-2.5-flash", (_tier(0.30, 2.50, 0.03, 1.00),), window=WINDOW, as_of=TODAY,
              source=f"{PAGE} not read itself; deploybase.ai's copy (March 2026) gives $0.30/$2.50"),
    ModelInfo("gemini-2.5-flash-lite", (_tier(0.10, 0.40, 0.01, 1.00),), window=WINDOW, as_of="2025-11-15",
              source=f"{PAGE}, written 2025-11-15, not re-read"),
    ModelInfo("gemini-3-pro-preview", (_tier(2.00, 12.00, 0.20, 4.50), _tier(4.00, 18.00, 0.40, 4.50, above=200_000)),
              window=WINDOW, as_of=TODAY,
              source=f"{PAGE} not read itself; aifreeapi.com (from AI Studio, 2026-02-04) gives $2/$12, "
                     "> 200K $4/$18; cached (10% of input) and storage not verified"),
    ModelInfo("gemini-3-flash-preview", (_tier(0.50, 3.00, 0.05, 1.00),), window=WINDOW, as_of=TODAY,
              source=f"{PAGE} as quoted by factquire.com (accessed 2026-07-04): $0.50/$3, cached $0.05; "
                     "storage not verified"),
    ModelInfo("gemini-2.0-flash", (_tier(0.10, 0.40, 0.025, 1.00),), window=WINDOW, as_of="2025-11-15",
              source=f"{PAGE}, 2025-11-15", retired="retired by Google; use gemini-2.5-flash or newer"),
    ModelInfo("gemini-1.5-flash", (_tier(0.075, 0.30, 0.01875, 1.00),), window=WINDOW, as_of="2025-11-15",
              source=f"{PAGE}, 2025-11-15", retired="retired by Google; use gemini-2.5-flash or newer"),
    ModelInfo("gemini-1.5-pro", (_tier(1.25, 5.00, 0.3125, 4.50),), window=2_097_152, as_of="2025-11-15",
              source=f"{PAGE}, 2025-11-15", retired="retired by Google; use gemini-2.5-pro or newer"),
)

INFO = ProviderInfo(
    default_tokenizer="approx",  # no published tokenizer; gemini-count:MODEL asks the API
    remote_counter="gemini-count:{name}",
    batch="ctxprobe.models.batch_gemini:GeminiBatch",
    # minimums from the caching page (stored copy, last updated 2026-07-07: 2.5 Pro and
    # Flash 2,048, 3.x Pro 4,096; its 2026-05-07 version: 3 Flash Preview 1,024)
    caching=(
        (r"gemini-3(\.\d+)?-pro", CacheRules("automatic", 4096)),
        (r"gemini-3(\.\d+)?-flash", CacheRules("automatic", 1024)),
        (r"gemini-2\.5", CacheRules("automatic", 2048)),
        (r"gemini-2\.0", CacheRules("explicit", 4096)),
        (r"gemini-1\.5", CacheRules("explicit", 32768)),
    ),
    explicit_caching=True,
    reasoning="?thinking=N (thinking cannot be turned off on the Pro models)",
    models=MODELS,
    bare_hints=("gemini",),
    help="gemini/MODEL",
    sources=(PAGE, CACHING, "https://ai.google.dev/gemini-api/docs/batch-mode"),
)
