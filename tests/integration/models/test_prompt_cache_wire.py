"""Prompt caching end to end: real sweeps through the official SDKs against loopback fakes
that simulate each provider's prompt cache from the requests they see
(:mod:`fake_cache_apis`), so a hit proves our breakpoints, keys and caches work."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.prices.table import price_for
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.store import iter_export
from ctxprobe.sweep.run import run_sweep
from ctxprobe.families.phonebook.task_grid import phonebook_spec

from contract_checks import check_request
from fake_cache_apis import AnthropicCache, GeminiCache, OpenAICache, words
from fake_llm_apis import FakeServer

#: A current Gemini model asked for explicit caches (--cache-prompt explicit), 4,096-token minimum.
EXPLICIT = "gemini:gemini-3-pro-preview"
NIAH = {"lengths": "4k", "depths": "0,0.5,1", "reps": 2, "concurrency": 4, "decoding": {"max_tokens": 16}}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "sk-test-key-not-real-0000")


def serve(monkeypatch: pytest.MonkeyPatch, route: Any, var: str, suffix: str = "") -> Iterator[FakeServer]:
    with FakeServer(route) as server:
        monkeypatch.setenv(var, server.url + suffix)
        yield server
    # every cached request the sweep sent (breakpoints, prompt_cache_key, CachedContent)
    # passes the SDK's own request types (tests/integration/models/test_contract_requests.py)
    sent = [(path, body) for path, _, body in server.requests if body]  # GET and DELETE carry none
    checked = [check_request(path, body) for path, body in sent]
    assert sent and all(checked), [path for (path, _), c in zip(sent, checked) if not c]


@pytest.fixture
def anthropic_api(monkeypatch: pytest.MonkeyPatch, keys: None) -> Iterator[tuple[FakeServer, AnthropicCache]]:
    pytest.importorskip("anthropic")
    cache = AnthropicCache()
    for server in serve(monkeypatch, cache.route, "ANTHROPIC_BASE_URL"):
        yield server, cache


@pytest.fixture
def openai_api(monkeypatch: pytest.MonkeyPatch, keys: None) -> Iterator[tuple[FakeServer, OpenAICache]]:
    pytest.importorskip("openai")
    cache = OpenAICache()
    for server in serve(monkeypatch, cache.route, "OPENAI_BASE_URL", "/v1"):
        yield server, cache


@pytest.fixture
def gemini_api(monkeypatch: pytest.MonkeyPatch, keys: None) -> Iterator[tuple[FakeServer, GeminiCache]]:
    pytest.importorskip("google.genai")
    cache = GeminiCache()
    for server in serve(monkeypatch, cache.route, "GEMINI_BASE_URL"):
        yield server, cache


def sweep(model: str, store: Path, **extra: Any) -> tuple[str, dict[str, dict[str, Any]]]:
    spec = make_spec({"model": model, **NIAH, **extra})
    result = run_sweep(spec, store, progress=False)
    return result.run_id, {r["case_id"]: r for r in iter_export(result.run_id, store)}


def by_depth(rows: dict[str, dict[str, Any]], rep: int = 0) -> dict[float, dict[str, Any]]:
    return {r["depth"]: r for r in rows.values() if r["rep"] == rep}


def test_anthropic_breakpoints_write_once_and_read_after(tmp_path: Path,
                                                         anthropic_api: tuple[FakeServer, AnthropicCache]) -> None:
    server, cache = anthropic_api
    run_id, rows = sweep("anthropic:claude-sonnet-4-5", tmp_path / "s.sqlite")
    assert cache.breakpoints_seen and max(cache.breakpoints_seen) <= 4
    for rep in (0, 1):
        d = by_depth(rows, rep)
        # deepest first: depth 1 writes the prefix up to depth 0.5's needle, depth 0.5 reads it
        assert d[1.0]["cache_write_tokens"] > 1024 and d[1.0]["cached_prompt_tokens"] == 0
        assert d[0.5]["cached_prompt_tokens"] == d[1.0]["cache_write_tokens"]
        assert d[0.5]["cache_write_tokens"] == 0
        assert d[0.0]["cached_prompt_tokens"] == 0 and d[0.0]["cache_write_tokens"] == 0  # nothing shared
    # every response billed at its own prices: $3 input, $3.75 written, $0.30 read, $15 output per 1M
    price = price_for("anthropic:claude-sonnet-4-5")
    assert price is not None and (price.cache_write, price.cached_input) == (3.75, 0.30)
    for r in rows.values():
        read, written = r["cached_prompt_tokens"], r["cache_write_tokens"]
        plain = r["reported_prompt_tokens"] - read - written
        want = (plain * 3.0 + written * 3.75 + read * 0.30 + r["completion_tokens"] * 15.0) / 1e6
        assert r["cost_usd"] == pytest.approx(want, rel=1e-9)
    notes = "\n".join(load_report(run_id, tmp_path / "s.sqlite").notes)
    assert "planned" in notes and "billed" in notes


def test_anthropic_without_cache_prompt_reads_nothing(tmp_path: Path,
                                                      anthropic_api: tuple[FakeServer, AnthropicCache]) -> None:
    server, cache = anthropic_api
    _, rows = sweep("anthropic:claude-sonnet-4-5", tmp_path / "s.sqlite", cache_prompt="off")
    assert set(cache.breakpoints_seen) == {0}
    assert all(r["cached_prompt_tokens"] == 0 and r["cache_write_tokens"] == 0 for r in rows.values())
    assert all(isinstance(body["messages"][0]["content"], str) for path, _, body in server.requests
               if path == "/v1/messages")


def test_anthropic_phonebook_caches_the_book_in_the_system_message(
        tmp_path: Path, anthropic_api: tuple[FakeServer, AnthropicCache]) -> None:
    server, cache = anthropic_api
    spec = phonebook_spec(model="anthropic:claude-sonnet-4-5", entries=["400"], needles=[2, 5, 10], runs=1,
                          concurrency=3)
    result = run_sweep(spec, tmp_path / "s.sqlite", progress=False)
    rows = sorted(iter_export(result.run_id, tmp_path / "s.sqlite"), key=lambda r: r["rep"])
    assert [r["cache_write_tokens"] > 1024 for r in rows] == [True, False, False]
    assert rows[1]["cached_prompt_tokens"] == rows[2]["cached_prompt_tokens"] == rows[0]["cache_write_tokens"]
    # one breakpoint, past the whole book (the question's shared opening words are cached too)
    assert cache.breakpoints_seen == [1, 1, 1]
    system = server.requests[-1][2]["system"]
    book = len(words(system if isinstance(system, str) else "".join(b["text"] for b in system)))
    assert book < rows[1]["cached_prompt_tokens"] < rows[1]["reported_prompt_tokens"]


def test_openai_requests_of_a_group_share_one_cache_key_and_hit(tmp_path: Path,
                                                               openai_api: tuple[FakeServer, OpenAICache]) -> None:
    server, cache = openai_api
    _, rows = sweep("openai:gpt-4.1", tmp_path / "s.sqlite")
    # one key per (length, repetition), on its depths 1 and 0.5; depth 0 shares too little to ask
    counts = Counter(cache.keys)
    assert counts.pop(None) == 2 and sorted(counts.values()) == [2, 2]
    assert all(k.startswith("ctxprobe-") for k in counts)
    for rep in (0, 1):
        d = by_depth(rows, rep)
        assert d[1.0]["cached_prompt_tokens"] == 0
        shared = d[0.5]["cached_prompt_tokens"]
        assert shared >= 1024 and (shared - 1024) % 128 == 0  # 1,024 then 128-token steps
        assert d[0.0]["cache_write_tokens"] is None  # OpenAI reports no writes
    for r in rows.values():  # $2 input, $0.50 cached, $8 output per 1M
        read = r["cached_prompt_tokens"]
        want = ((r["reported_prompt_tokens"] - read) * 2.0 + read * 0.5 + r["completion_tokens"] * 8.0) / 1e6
        assert r["cost_usd"] == pytest.approx(want, rel=1e-9)


def test_openai_endpoint_refusing_the_cache_key_is_sent_again_without(
        tmp_path: Path, openai_api: tuple[FakeServer, OpenAICache]) -> None:
    server, cache = openai_api
    answer = cache.route

    def strict(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
        if "prompt_cache_key" in body:  # a proxy that knows no such parameter
            return 400, {"error": {"message": "Unrecognized request argument supplied: prompt_cache_key",
                                   "type": "invalid_request_error"}}, {}
        return answer(method, path, headers, body)

    server.route = strict
    _, rows = sweep("openai:gpt-4.1", tmp_path / "s.sqlite", reps=1)
    assert all(r["outcome"] != "error" for r in rows.values())
    d = by_depth(rows)  # caching is automatic all the same (whichever of the two went first after the refusal)
    assert max(d[0.5]["cached_prompt_tokens"], d[1.0]["cached_prompt_tokens"]) >= 1024
    assert sum("prompt_cache_key" in body for _, _, body in server.requests) == 1  # refused once, then never sent


def test_gemini_explicit_caches_created_used_and_deleted(tmp_path: Path,
                                                        gemini_api: tuple[FakeServer, GeminiCache]) -> None:
    server, cache = gemini_api
    _, rows = sweep(EXPLICIT, tmp_path / "s.sqlite", depths="0,0.25,0.5,0.75,1", lengths="8k", cache_prompt="explicit")
    assert cache.created and sorted(cache.created) == sorted(cache.deleted)  # nothing left to pay storage for
    for rep in (0, 1):
        d = by_depth(rows, rep)
        # depth 1 creates the cache up to depth 0.75's needle and reads it; depth 0.75 reuses it
        assert d[1.0]["cache_write_tokens"] == d[1.0]["cached_prompt_tokens"] > 0
        assert d[0.75]["cached_prompt_tokens"] == d[1.0]["cached_prompt_tokens"] and not d[0.75]["cache_write_tokens"]
        assert d[0.0]["cached_prompt_tokens"] is None
    generate = [body for path, _, body in server.requests if path.endswith(":generateContent")]
    # a prefix below gemini-3-pro's 4,096-token minimum (depth 0.25 of 8K) is sent whole
    used = [body for body in generate if "cachedContent" in body]
    assert len(used) == sum(bool(r["cached_prompt_tokens"]) for r in rows.values()) >= 4
    assert d[0.25]["cached_prompt_tokens"] is None and not any("systemInstruction" in body for body in used)
    price = price_for(EXPLICIT)
    assert price is not None and (price.input, price.cached_input, price.cache_storage, price.output) == (2, 0.2, 4.5, 12)
    for r in rows.values():  # creation at the input price plus 5 minutes of storage, reads at the cached price
        read, written = r["cached_prompt_tokens"] or 0, r["cache_write_tokens"] or 0
        want = ((r["reported_prompt_tokens"] - read) * 2.0 + read * 0.2 + written * (2.0 + 4.5 / 12)
                + r["completion_tokens"] * 12.0) / 1e6
        assert r["cost_usd"] == pytest.approx(want, rel=1e-9)


def test_gemini_cache_gone_before_its_group_is_done_is_created_again(
        tmp_path: Path, gemini_api: tuple[FakeServer, GeminiCache]) -> None:
    server, cache = gemini_api
    cache.expire_after_use = True  # every cache lapses right after its first use
    _, rows = sweep(EXPLICIT, tmp_path / "s.sqlite", depths="0.75,1", lengths="8k", reps=1, cache_prompt="explicit")
    d = by_depth(rows)
    assert all(r["outcome"] != "error" for r in rows.values())
    # depth 0.75 found the cache gone (404), and was answered from a new one
    assert len(cache.created) == 2 and d[0.75]["cached_prompt_tokens"] == d[1.0]["cached_prompt_tokens"] > 0
    assert d[0.75]["cache_write_tokens"] == d[1.0]["cache_write_tokens"] and d[0.75]["attempts"] == 2


def test_gemini_cache_the_api_refuses_is_sent_whole(tmp_path: Path,
                                                    gemini_api: tuple[FakeServer, GeminiCache]) -> None:
    server, cache = gemini_api
    cache.min_tokens = 10**6  # by the API's count every prefix is too small to cache
    _, rows = sweep(EXPLICIT, tmp_path / "s.sqlite", depths="0.75,1", lengths="8k", reps=1, cache_prompt="explicit")
    assert all(r["outcome"] != "error" and r["cached_prompt_tokens"] is None for r in rows.values())
    creates = [path for path, _, _ in server.requests if path.endswith("/cachedContents")]
    assert len(creates) == 1  # refused once, not asked again for the group's next request


def test_gemini_25_caches_implicitly_without_explicit_caches(tmp_path: Path,
                                                             gemini_api: tuple[FakeServer, GeminiCache]) -> None:
    server, cache = gemini_api
    _, rows = sweep("gemini:gemini-2.5-flash", tmp_path / "s.sqlite")
    assert cache.created == []
    d = by_depth(rows)
    assert d[0.5]["cached_prompt_tokens"] >= 1024 and d[1.0]["cached_prompt_tokens"] is None


def test_a_pack_resent_asks_for_caching_too(tmp_path: Path, anthropic_api: tuple[FakeServer, AnthropicCache]) -> None:
    from ctxprobe.report.export import export_jsonl
    from ctxprobe.sweep.packs import run_pack

    server, cache = anthropic_api
    run_id, _ = sweep("anthropic:claude-sonnet-4-5", tmp_path / "s.sqlite", reps=1, cache_prompt="off")
    pack = tmp_path / "pack.jsonl"
    with pack.open("w", encoding="utf-8") as out:
        export_jsonl(run_id, tmp_path / "s.sqlite", out)
    # force: the approximate counter was recalibrated by the first run, so it counts differently now
    result = run_pack(pack, "anthropic:claude-sonnet-4-5", tmp_path / "p.sqlite", force=True)
    rows = {r["depth"]: r for r in iter_export(result.run_id, tmp_path / "p.sqlite")}
    # a pack is sent in its file's order (depth 0 first): 0.5 writes what 1 then reads
    assert rows[0.5]["cache_write_tokens"] > 0 and rows[1.0]["cached_prompt_tokens"] == rows[0.5]["cache_write_tokens"]
