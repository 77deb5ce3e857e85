"""Server-reported prefix-cache hits: parsed from every API's usage shape, stored
per response, and stated in the report beside the sharing mode that built the cases."""

from __future__ import annotations

import html
import sqlite3

import pytest

from ctxprobe.models import resolve_provider
from ctxprobe.providers.anthropic.api import parse_message
from ctxprobe.models.base import cached_prompt_tokens
from ctxprobe.providers.gemini.api import parse_response
from ctxprobe.providers.openai.api import parse_chat_completion
from ctxprobe.sim.prefix_cache import PrefixCacheSimServer
from ctxprobe.report.html.page import build_html_report
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

_CHOICE = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}


def test_cached_tokens_from_each_api_shape() -> None:
    assert cached_prompt_tokens({"usage": {"prompt_tokens_details": {"cached_tokens": 7}}}) == 7
    assert cached_prompt_tokens({"timings": {"cache_n": 12, "prompt_n": 3}}) == 12  # llama.cpp server
    assert cached_prompt_tokens({"usage": {"prompt_tokens": 5}}) is None  # not reported is not 0
    assert cached_prompt_tokens({"usage": {"prompt_tokens_details": {"cached_tokens": True}}}) is None
    assert cached_prompt_tokens({"usage": {"prompt_tokens_details": None}, "timings": {"cache_n": 0}}) == 0
    openai = parse_chat_completion({**_CHOICE, "usage": {"prompt_tokens": 10, "completion_tokens": 1,
                                                         "prompt_tokens_details": {"cached_tokens": 8}}})
    assert openai.extra["cached_prompt_tokens"] == 8
    anthropic = parse_message({"content": [{"type": "text", "text": "x"}], "stop_reason": "end_turn",
                               "usage": {"input_tokens": 3, "cache_read_input_tokens": 40, "output_tokens": 1}})
    assert anthropic.prompt_tokens == 43 and anthropic.extra["cached_prompt_tokens"] == 40
    gemini = parse_response({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}],
                             "usageMetadata": {"promptTokenCount": 50, "cachedContentTokenCount": 32}})
    assert gemini.extra["cached_prompt_tokens"] == 32
    plain = parse_chat_completion({**_CHOICE, "usage": {"prompt_tokens": 10, "completion_tokens": 1}})
    assert "cached_prompt_tokens" not in plain.extra


def test_sweep_stores_and_reports_server_cache_hits(tmp_path) -> None:
    tok = resolve_tokenizer("local")
    with PrefixCacheSimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = server.start()
        spec = make_spec({"model": f"openai-compat:sim@{url}", "tokenizer": "local", "lengths": "512,1k",
                          "depths": "0,0.5,1", "reps": 1, "concurrency": 1, "retries": 0})
        store = tmp_path / "s.sqlite"
        result = run_sweep(spec, store, progress=False)
        cases = server.cache.records[-6:]  # the sweep's own requests (preflight probes come first)
        served = sum(r.cached_tokens for r in cases)
    db = sqlite3.connect(store)
    stored = db.execute("SELECT SUM(cached_prompt_tokens), COUNT(cached_prompt_tokens) FROM responses").fetchone()
    db.close()
    assert stored == (served, 6) and served > 0.2 * sum(r.prompt_tokens for r in cases)  # as the server said
    report = load_report(result.run_id, store)
    note = next(n for n in report.notes if n.startswith("prefix cache:"))
    assert f"{served:,} of " in note and "filler shared across depths" in note
    assert report.to_dict()["prefix_sharing"] == "shared"
    page = html.unescape(build_html_report([result.run_id], store, tmp_path / "r.html").read_text())
    assert "reused from the model's prefix cache" in page and "sent deepest first" in page


def test_no_cache_figures_no_claim(tmp_path) -> None:
    """A server that reports nothing about its cache gets no cache line at all."""
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "512", "depths": "0,1", "reps": 1,
                      "share_prefix": False})
    store = tmp_path / "s.sqlite"
    result = run_sweep(spec, store, progress=False)
    report = load_report(result.run_id, store)
    assert not [n for n in report.notes if n.startswith("prefix cache:")]
    assert report.to_dict()["prefix_sharing"] == "independent"
    page = html.unescape(build_html_report([result.run_id], store, tmp_path / "r.html").read_text())
    assert "every case has its own filler" in page and "prefix cache (" not in page


@pytest.mark.slow
def test_in_process_llama_reports_its_kv_reuse(tmp_path) -> None:
    """The embedded model keeps the KV cache of the prompt before the needle: the depth-0.5
    case, sent after the depth-1 case of its group, reuses about half of its prompt."""
    spec = make_spec({"model": "local", "lengths": "512", "depths": "0.5,1", "reps": 1,
                      "decoding": {"max_tokens": 8}})
    store = tmp_path / "s.sqlite"
    result = run_sweep(spec, store, progress=False)
    by_depth = {r["depth"]: r for r in iter_export(result.run_id, store)}
    half = by_depth[0.5]
    assert half["cached_prompt_tokens"] is not None
    assert 0.4 * half["token_count"] <= half["cached_prompt_tokens"] <= half["needle_token_pos"]
