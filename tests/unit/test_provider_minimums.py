"""Caching minimums and batch caps that genai-prices does not know, each from its page.

- Anthropic: the prompt-cache minimum of Claude Opus 4.6 (with Opus 4.5 and Haiku 4.5) was
  "increased from 1,024 to 4,096" (docs.aihubmix.com/en/api/Claude-Cache, quoting
  Anthropic's prompt-caching page; docs.orq.ai/docs/proxy/prompt-caching lists "Claude Opus
  4.6, Opus 4.5: 4,096"), read 2026-12-03.
- Gemini: "Gemini 3.5 Flash 4096" in the implicit-caching table of
  ai.google.dev/gemini-api/docs/caching (copy of 2026-06-26 on techdevnotes.com); 3.6-3.8
  Flash taken to be the same; 3 Flash Preview stays 1,024 (the same table's older copies).
- Batch caps are written in MB (10^6 bytes): Anthropic "256 MB" a batch
  (platform.claude.com/docs/en/build-with-claude/batch-processing), OpenAI "200 MB" an
  input file (platform.openai.com/docs/guides/batch), Gemini "20 MB" of inlined requests
  (ai.google.dev/gemini-api/docs/batch-mode).
"""

from __future__ import annotations

import pytest

from ctxprobe.plan.caching import cache_rules


@pytest.mark.parametrize("model, minimum", [
    ("anthropic:claude-opus-4-6", 4096), ("anthropic:claude-opus-4-5", 4096), ("anthropic:claude-haiku-4-5", 4096),
    ("anthropic:claude-sonnet-4-5", 1024),
    # issue 48: 4,096 for Opus 4.7/4.8, 2,048 for Sonnet 4.6 and Fable 5 (were 1,024)
    ("anthropic:claude-opus-4-7", 4096), ("anthropic:claude-opus-4-8", 4096),
    ("anthropic:claude-sonnet-4-6", 2048), ("anthropic:claude-fable-5", 2048), ("anthropic:claude-fable-5-1", 2048),
    ("gemini:gemini-3.5-flash", 4096), ("gemini:gemini-3.6-flash", 4096), ("gemini:gemini-3.7-flash", 4096),
    ("gemini:gemini-3.8-flash", 4096), ("gemini:gemini-3-flash-preview", 1024), ("gemini:gemini-3.9-flash", 1024),
    ("gemini:gemini-3.1-pro-preview", 4096),
])
def test_prompt_cache_minimums(model: str, minimum: int) -> None:
    assert cache_rules(model).min_tokens == minimum


def test_a_prefix_one_token_short_of_opus_4_6s_minimum_is_not_cached() -> None:
    from ctxprobe.plan.caching import Billed, Member, bill_group

    rules = cache_rules("anthropic:claude-opus-4-6")
    short = [Member(5000, (4095,), 0), Member(5000, (4095,), 4095)]
    assert bill_group(short, rules) == [Billed(0, 0, 5000), Billed(0, 0, 5000)]
    full = [Member(5000, (4096,), 0), Member(5000, (4096,), 4096)]
    assert bill_group(full, rules) == [Billed(0, 4096, 5000 - 4096), Billed(4096, 0, 5000 - 4096)]


@pytest.mark.parametrize("module, megabytes", [("anthropic", 256), ("openai", 200), ("gemini", 19)])
def test_batch_caps_are_megabytes_not_mebibytes(module: str, megabytes: int) -> None:
    import importlib

    limits = importlib.import_module(f"ctxprobe.providers.{module}.batch").LIMITS
    assert limits.max_bytes == megabytes * 10**6
    assert limits.max_bytes < megabytes * 2**20
