"""Anthropic: counted by its API, cache_control breakpoints, Message Batches, list prices
with the long-context tier of Sonnet 4 / 4.5 (prompts over 200K tokens, with the 1M window)."""

from __future__ import annotations

from ctxprobe.core.catalog import CacheRules, ModelInfo, Price, ProviderInfo

PAGE = "https://docs.anthropic.com/en/docs/about-claude/pricing"
TODAY = "2026-12-03"


def _tier(inp: float, out: float, above: int = 0) -> Price:
    """Caching prices are fixed multiples of the input price (of the tier): writes 1.25×
    (5 minutes) or 2× (1 hour), reads 0.1×; batches half price."""
    return Price(inp, out, cached_input=round(inp * 0.1, 6), cache_write=round(inp * 1.25, 6),
                 cache_write_1h=round(inp * 2, 6), batch=0.5, above=above)


#: Sonnet 4 / 4.5 with the 1M window: a request whose input (cache reads and writes
#: included) is over 200,000 tokens is billed entirely at $6 / $22.50.
_LONG = (_tier(3.00, 15.00), _tier(6.00, 22.50, above=200_000))
_1M = 1_000_000
_OPTION = "context_1m=true"  # sends the context-1m beta header
_RETIRED_35 = "retired by Anthropic (model deprecations page); use claude-haiku-4-5 or a newer Sonnet"

MODELS = (
    ModelInfo("claude-sonnet-4-5", _LONG, window=200_000, long_window=_1M, long_option=_OPTION, as_of=TODAY,
              aliases=("claude-sonnet-4-5-20250929",),
              source=f"{PAGE} (stored copy read {TODAY}: <= 200K $3/$15, > 200K $6/$22.50; "
                     "platform.claude.com's Sonnet 4.5 page: $3/$15, 200K window)",
              deprecated="platform.claude.com's Sonnet 4.5 page (stored copy) says deprecated, retiring "
                         "2026-11-30; whether it is retired could not be checked here"),
    ModelInfo("claude-sonnet-4-0", _LONG, window=200_000, long_window=_1M, long_option=_OPTION, as_of=TODAY,
              aliases=("claude-sonnet-4-20250514",),
              source=f"{PAGE} (stored copy read {TODAY})",
              retired="retired 2026-06-15 (Anthropic's release notes, as recorded by ai-provider-watch); "
                      "use a newer Sonnet"),
    ModelInfo("claude-opus-4-5", (_tier(5.00, 25.00),), window=200_000, as_of=TODAY,
              aliases=("claude-opus-4-5-20251101",),
              source=f"{PAGE} not read; deploybase.ai's table (March 2026) gives $5/$25, 200K",
              deprecated="reaches end of life on 2027-01-22 (the anthropic SDK's own deprecation list, "
                         "anthropic 2.16); use a newer Opus"),
    ModelInfo("claude-haiku-4-5", (_tier(1.00, 5.00),), window=200_000, as_of=TODAY,
              aliases=("claude-haiku-4-5-20251001",),
              source=f"{PAGE} not read; deploybase.ai's table (March 2026) gives $1/$5, 200K"),
    ModelInfo("claude-opus-4-1", (_tier(15.00, 75.00),), window=200_000, as_of=TODAY,
              source=f"{PAGE} (stored copy read {TODAY}: $15/$75)",
              deprecated="totalum.app (June 2026) gives its retirement as 2026-08-05; not confirmed on "
                         "Anthropic's page"),
    ModelInfo("claude-3-5-haiku-latest", (_tier(0.80, 4.00),), window=200_000, as_of="2025-11-15",
              source=f"{PAGE}, 2025-11-15", retired=_RETIRED_35),
    ModelInfo("claude-3-5-sonnet-latest", (_tier(3.00, 15.00),), window=200_000, as_of="2025-11-15",
              source=f"{PAGE}, 2025-11-15", retired="retired 2025-10-28; use a newer Sonnet"),
    ModelInfo("claude-3-7-sonnet-latest", (_tier(3.00, 15.00),), window=200_000, as_of="2025-11-15",
              source=f"{PAGE}, 2025-11-15", retired="retired 2026-02-19; use a newer Sonnet"),
)

INFO = ProviderInfo(
    default_tokenizer="approx",  # no published tokenizer; anthropic-count:MODEL asks the API
    remote_counter="anthropic-count:{name}",
    batch="ctxprobe.models.batch_anthropic:AnthropicBatch",
    caching=(
        (r"claude-(opus-4-5|haiku-4-5)", CacheRules("breakpoints", 4096)),
        (r"claude-(3-haiku|3-5-haiku)", CacheRules("breakpoints", 2048)),
        (r"claude-", CacheRules("breakpoints", 1024)),
    ),
    reasoning="?thinking=N (at least 1,024), ?effort=low|medium|high",
    models=MODELS,
    bare_hints=("claude",),
    help="anthropic/MODEL",
    sources=(PAGE, "https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching",
             "https://docs.anthropic.com/en/docs/build-with-claude/batch-processing",
             "https://docs.anthropic.com/en/docs/about-claude/model-deprecations"),
)
