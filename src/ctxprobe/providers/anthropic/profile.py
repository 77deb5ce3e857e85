"""Anthropic: counted by its API, cache_control breakpoints, Message Batches; prices,
tiers and windows from genai-prices (``price_library="anthropic"``)."""

from __future__ import annotations

from ctxprobe.core.catalog import BatchDiscount, CacheRules, ModelInfo, ProviderInfo

PAGE = "https://docs.anthropic.com/en/docs/about-claude/pricing"
#: The batch price of a model genai-prices has no batch variant for (Opus 4 and 4.1, Sonnet
#: 4): "50% of standard API prices" on the Message Batches page; written
#: 2025-11-15, checked 2026-12-04 against genai-prices 0.2.3, whose Anthropic batch variants
#: all halve input, output and cache prices.
_BATCH = ('docs.anthropic.com/en/docs/build-with-claude/batch-processing: "50% of standard API prices", '
          "read 2025-11-15")
_RETIRED_35 = "retired by Anthropic (model deprecations page); use claude-haiku-4-5 or a newer Sonnet"

#: ctxprobe's own notes, not prices: prices and windows are genai-prices' (anthropic).
#: Sonnet 4 / 4.5's 1M-window beta (``context-1m``) was retired on 2026-04-30 (genai-prices'
#: note on claude-sonnet-4-5, citing platform.claude.com's release notes): requests past
#: 200K fail, so ctxprobe no longer offers ``?context_1m=true``.
MODELS = (
    ModelInfo("claude-sonnet-4-5", aliases=("claude-sonnet-4-5-20250929",),
              deprecated="platform.claude.com's Sonnet 4.5 page (stored copy, read 2026-12-03) says deprecated, "
                         "retiring 2026-11-30; whether it is retired could not be checked here"),
    ModelInfo("claude-sonnet-4-0", aliases=("claude-sonnet-4-20250514",),
              retired="retired 2026-06-15 (Anthropic's release notes, as recorded by ai-provider-watch, read "
                      "2026-12-03); use a newer Sonnet"),
    ModelInfo("claude-opus-4-5", aliases=("claude-opus-4-5-20251101",),
              deprecated="reaches end of life on 2027-01-22 (the anthropic SDK's own deprecation list, "
                         "anthropic 2.16); use a newer Opus"),
    ModelInfo("claude-haiku-4-5", aliases=("claude-haiku-4-5-20251001",)),
    ModelInfo("claude-opus-4-1",
              deprecated="totalum.app (June 2026) gives its retirement as 2026-08-05; not confirmed on "
                         "Anthropic's page"),
    ModelInfo("claude-3-5-haiku-latest", retired=_RETIRED_35),
    # Claude 1-3, which genai-prices 0.2.3 still prices and does not mark (read 2026-12-04):
    ModelInfo("claude-v1", retired="Claude 1.x and Instant retired 2024-11-06 (Anthropic's model deprecations page, "
                                   "as tabled by ghost.fail/model-deprecation); use claude-haiku-4-5 or newer"),
    ModelInfo("claude-2", retired="Claude 2.0 and 2.1 retired 2025-07-21 (model deprecations page); use a newer Sonnet"),
    ModelInfo("claude-3-sonnet", retired="Claude Sonnet 3 retired 2025-07-21 (model deprecations page); "
                                         "use a newer Sonnet"),
    ModelInfo("claude-3-opus-latest", retired="Claude Opus 3 retired 2026-01-05 (anthropic.com/research/"
                                              "deprecation-updates-opus-3; API access by request only); use a newer Opus"),
    ModelInfo("claude-3-haiku", retired="Claude Haiku 3 retired 2026-04-20 (Anthropic's release notes, as reported "
                                        "by 24-ai.news and dev.to/flarecanary, April 2026); use claude-haiku-4-5"),
    ModelInfo("claude-3-5-sonnet-latest", retired="retired 2025-10-28 (model deprecations page); use a newer Sonnet"),
    ModelInfo("claude-3-7-sonnet-latest", retired="retired 2026-02-19 (model deprecations page); use a newer Sonnet"),
)

INFO = ProviderInfo(
    default_tokenizer="approx",  # no published tokenizer; anthropic-count:MODEL asks the API
    remote_counter="anthropic-count:{name}",
    batch="ctxprobe.providers.anthropic.batch:AnthropicBatch",
    batch_discount=BatchDiscount(0.5, _BATCH),
    caching=(
        # 4,096 for Opus 4.6, Opus 4.5 and Haiku 4.5: the minimum "increased from 1,024 to 4,096"
        # (docs.aihubmix.com/en/api/Claude-Cache, a relay quoting Anthropic's prompt-caching page;
        # docs.orq.ai/docs/proxy/prompt-caching's table agrees), read 2026-12-03
        (r"claude-(opus-4-6|opus-4-5|haiku-4-5)", CacheRules("breakpoints", 4096)),
        # 4,096 for Opus 4.7 and 4.8 as for 4.5/4.6 (claudecodeguides.com/claude-cache-minimum-token-
        # requirements-2026 tables Opus 4.7 at 4,096, read 2026-12-04; issue 48 against the provider's page)
        (r"claude-opus-4-[78](?!\d)", CacheRules("breakpoints", 4096)),
        # 2,048 for Sonnet 4.6 and Fable 5: github.com/anthropics/anthropic-sdk-python issue 1194 (Sonnet 4.6
        # caches from 2,048, not the 1,024 the page said), and issue 48 against the provider's page
        (r"claude-(sonnet-4-6|fable-5)(?!\d)", CacheRules("breakpoints", 2048)),
        (r"claude-(3-haiku|3-5-haiku)", CacheRules("breakpoints", 2048)),
        (r"claude-", CacheRules("breakpoints", 1024)),
    ),
    reasoning="?thinking=N (at least 1,024), ?adaptive=true, ?effort= (the levels the model lists)",
    models=MODELS,
    price_library="anthropic",
    bare_hints=("claude",),
    help="anthropic/MODEL",
    plan_notes="ctxprobe.providers.anthropic.rules:plan_notes",
    sources=(PAGE, "https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching",
             "https://docs.anthropic.com/en/docs/build-with-claude/batch-processing",
             "https://docs.anthropic.com/en/docs/about-claude/model-deprecations"),
)
