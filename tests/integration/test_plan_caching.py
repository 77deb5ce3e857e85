"""The plan's cached price: each provider's rules on hand-made groups, worked by hand, and
the cached share of one small real grid recomputed by hand from its built prompts."""

from __future__ import annotations

import pytest

from ctxprobe.cases.builder import BuildSettings, CaseBuilder
from ctxprobe.cases.prefixes import first_group, group_hints, shared_point
from ctxprobe.plan.caching import Billed, CacheRules, Member, bill_group, cache_rules, response_cost, worst_cost
from ctxprobe.prices.table import Price, load_prices, price_for
from ctxprobe.spec import make_spec
from ctxprobe.sweep.pricing import price_plan

# Five depths of 10,000 tokens sent deepest first; the needles of 0.75 / 0.5 / 0.25 sit at
# 7,500 / 5,000 / 2,500 tokens, depth 0's right after a 200-token instruction.
GROUP = [Member(10_000, (2_500, 5_000, 7_500), 0), Member(10_000, (2_500, 5_000, 7_500), 7_500),
         Member(10_000, (2_500, 5_000), 5_000), Member(10_000, (2_500,), 2_500), Member(10_000, (), 200)]


def test_anthropic_breakpoints_write_the_deepest_and_read_after() -> None:
    billed = bill_group(GROUP, CacheRules("breakpoints", 1024))
    # A writes up to its last breakpoint (7,500); B, C, D read their needle's boundary
    assert billed == [Billed(0, 7_500, 2_500), Billed(7_500, 0, 2_500), Billed(5_000, 0, 5_000),
                      Billed(2_500, 0, 7_500), Billed(0, 0, 10_000)]
    # a minimum above a boundary drops it: with 4,096 tokens the 2,500 boundary is never cached
    assert bill_group(GROUP, CacheRules("breakpoints", 4096))[3] == Billed(0, 0, 10_000)


def test_at_most_four_breakpoints_the_largest() -> None:
    one = [Member(20_000, (2_000, 4_000, 6_000, 8_000, 10_000, 12_000)), Member(20_000, (2_000, 4_000), 4_000)]
    first, second = bill_group(one, CacheRules("breakpoints", 1024))
    assert first == Billed(0, 12_000, 8_000)  # marks 6K..12K chosen; 2K and 4K not written
    assert second == Billed(0, 4_000, 16_000)  # so the next one writes its own


def test_openai_automatic_in_128_token_steps() -> None:
    billed = bill_group(GROUP, CacheRules("automatic", 1024, increment=128))
    # 7,500 → 1,024 + 50 × 128 = 7,424; 5,000 → 1,024 + 31 × 128 = 4,992; 2,500 → 2,432; 200 → below the minimum
    assert [b.read for b in billed] == [0, 7_424, 4_992, 2_432, 0]
    # the rest of each prompt's cacheable prefix (10,000 → 9,984) is written: billed at the
    # cache-write price where the model has one (gpt-5.6 / gpt-6, openai 3.60's
    # cache_write_tokens), as plain input elsewhere
    assert [b.written for b in billed] == [9_984 - b.read for b in billed]
    assert all(b.read + b.written + b.plain == 10_000 for b in billed)


def test_openai_automatic_writes_cost_extra_only_where_priced() -> None:
    from ctxprobe.core.catalog import Price

    billed = bill_group(GROUP, CacheRules("automatic", 1024, increment=128))
    plain = Price(input=2.0, output=8.0, cached_input=0.2)
    writes = Price(input=2.0, output=8.0, cached_input=0.2, cache_write=2.5)
    first = billed[0]
    assert plain.cost(10_000, 0, cached=first.read, written=first.written) == plain.cost(10_000, 0)
    assert writes.cost(10_000, 0, cached=first.read, written=first.written) == pytest.approx(
        (16 * 2.0 + 9_984 * 2.5) / 1e6)


def test_gemini_explicit_creates_once_per_boundary() -> None:
    billed = bill_group(GROUP, CacheRules("explicit", 1024))
    assert [(b.read, b.written) for b in billed] == [(7_500, 7_500), (7_500, 0), (5_000, 5_000), (2_500, 2_500), (0, 0)]
    assert [b.prompt for b in billed] == [10_000] * 5  # the creation is billed on top of the prompt


def test_cache_rules_per_model() -> None:
    assert cache_rules("anthropic:claude-sonnet-4-5") == CacheRules("breakpoints", 1024)
    assert cache_rules("anthropic:claude-haiku-4-5").min_tokens == 4096
    assert cache_rules("anthropic:claude-3-5-haiku-latest").min_tokens == 2048
    assert cache_rules("openai:gpt-4.1") == CacheRules("automatic", 1024, increment=128)
    assert cache_rules("gemini:gemini-2.5-flash").mechanism == "automatic"
    assert cache_rules("gemini:gemini-2.5-flash", explicit=True).mechanism == "explicit"
    assert cache_rules("gemini:gemini-2.0-flash") == CacheRules("explicit", 4096)
    assert cache_rules("sim:perfect").mechanism == "none"


def test_response_cost_each_token_at_its_price() -> None:
    sonnet = price_for("anthropic:claude-sonnet-4-5")
    assert sonnet is not None
    # 10,000 prompt tokens: 6,000 read ($0.30), 3,000 written ($3.75), 1,000 plain ($3); 100 out ($15)
    assert response_cost(sonnet, "anthropic:claude-sonnet-4-5", 10_000, 100, cached=6_000, written=3_000) == \
        pytest.approx((6_000 * 0.30 + 3_000 * 3.75 + 1_000 * 3.0 + 100 * 15.0) / 1e6)
    assert response_cost(sonnet, "anthropic:claude-sonnet-4-5", 10_000, 100, batch=True) == \
        pytest.approx((10_000 * 1.5 + 100 * 7.5) / 1e6)
    # a cache write is the dearest fate of a prompt token: the worst case reserves it
    assert worst_cost(sonnet, "anthropic:claude-sonnet-4-5", 10_000, 100) == \
        pytest.approx((10_000 * 3.75 + 100 * 15.0) / 1e6)
    # the hour-long TTL writes at 2x input
    assert response_cost(sonnet, "anthropic:claude-sonnet-4-5?cache_ttl=1h", 10_000, 0, written=10_000) == \
        pytest.approx(10_000 * 6.0 / 1e6)
    flash = price_for("gemini:gemini-2.0-flash")
    assert flash is not None  # created ($0.10 + 5 min of $1.00/h storage) and read ($0.025)
    assert response_cost(flash, "gemini:gemini-2.0-flash", 10_000, 0, cached=8_000, written=8_000) == \
        pytest.approx((2_000 * 0.10 + 8_000 * 0.025 + 8_000 * (0.10 + 1.00 / 12)) / 1e6)


def test_price_file_takes_cache_prices(tmp_path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("myco:m: {input: 1.0, output: 2.0, cached_input: 0.1, batch: 0.5}\n")
    assert price_for("myco:m", load_prices(f)) == Price(1.0, 2.0, cached_input=0.1, batch=0.5)


def test_shared_point_stops_at_a_whitespace() -> None:
    a = [{"role": "system", "content": "book"}, {"role": "user", "content": "find alpha beta"}]
    b = [{"role": "system", "content": "book"}, {"role": "user", "content": "find alpine"}]
    assert shared_point(a, b) == (1, len("find "))
    c = [{"role": "system", "content": "book"}, {"role": "user", "content": "zzz"}]
    assert shared_point(a, c) == (0, 4)  # the end of the system message


def test_plan_cached_share_of_a_small_grid_by_hand() -> None:
    """niah at 4K and 6K, depths 0 / 0.5 / 1, 2 repetitions, priced for gpt-4.1: recomputed
    here from the built prompts, where each case's needle starts."""
    spec = make_spec({"model": "openai:gpt-4.1", "tokenizer": "tiktoken:o200k_base", "lengths": "4k,6k",
                      "depths": "0,0.5,1", "reps": 2})
    plan = price_plan(spec)
    assert plan.totals is not None
    builder = CaseBuilder(BuildSettings.of(spec, "tiktoken:o200k_base"))
    tok = builder.families["niah"][0].ctx.tokenizer  # type: ignore[attr-defined]
    prompt = read = 0
    for length in spec.lengths:
        deep, half, zero = (builder.build(p) for p in first_group(spec, "niah", length, 1))
        for case in (deep, half, zero):
            prompt += case.token_count
        # depth 0.5 shares with depth 1 everything before its needle (and no more than
        # the words the two texts still have in common after it)
        text = half.messages[0]["content"]
        before = text[:text.index(half.meta["needle"])]
        assert deep.messages[0]["content"].startswith(before)
        shared = tok.count(before)
        after = deep.messages[0]["content"][len(before):].split(" ", 1)[0]
        if half.meta["needle"].startswith(after + " "):
            shared = tok.count(before + after + " ")  # the next filler word happens to match the needle's
        read += 1024 + (shared - 1024) // 128 * 128  # OpenAI: 1,024 tokens, then 128-token steps
        # depth 0's needle sits right after the instruction: under 1,024 shared, nothing read
        assert tok.count(zero.messages[0]["content"][:zero.messages[0]["content"].index(zero.meta["needle"])]) < 1024
    prompt *= spec.reps
    read *= spec.reps
    assert (plan.totals.prompt, plan.totals.read) == (prompt, read)
    out = plan.totals.output
    assert plan.costs["on-demand"] == pytest.approx((prompt * 2.0 + out * 8.0) / 1e6)
    assert plan.costs["cached"] == pytest.approx(((prompt - read) * 2.0 + read * 0.5 + out * 8.0) / 1e6)
    assert plan.costs["batch"] == pytest.approx((prompt * 1.0 + out * 4.0) / 1e6)
    assert 0.1 < plan.totals.read_share < 1 / 6  # about half of one prompt of three


def test_group_hints_same_points_in_every_member() -> None:
    def prompt(tail: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": "w " * 3000 + tail}]

    hints = group_hints([prompt("x " * 500 + "NEEDLE one"), prompt("NEEDLE two " + "x " * 500), prompt("other")],
                        lambda text: len(text.split()))
    first, second, third = hints
    assert first is not None and second is not None and third is not None
    assert first.first and not second.first and first.key == second.key == third.key
    assert [m.tokens for m in first.marks] == [m.tokens for m in second.marks] == [3000]
    assert second.reads == 3000 and first.reads == 0


def test_cli_plan_prints_three_prices_and_the_capped_one(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxprobe.cli import main

    code = main(["plan", "--model", "openai/gpt-4.1", "--tokenizer", "tiktoken:o200k_base", "--lengths", "4k",
                 "--depths", "0,0.5,1", "--reps", "1", "--max-cost", "0.001", "--pricing", "batch"])
    out = capsys.readouterr().out
    assert code == 0
    for label in ("on demand  $", "cached     $", "batch      $"):
        assert label in out
    assert "caps the batch price: over it" in out and "128-token steps" in out


def test_run_refuses_batch_pricing_when_sent_request_by_request(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from ctxprobe.cli import main

    store = tmp_path / "s.sqlite"
    code = main(["run", "--model", "sim:perfect", "--lengths", "512", "--reps", "1", "--pricing", "batch",
                 "--store", str(store), "--no-plots", "--no-progress"])
    assert code == 2 and "--pricing batch" in capsys.readouterr().err
    assert not store.exists()  # refused before the store was touched


def test_prefix_gate_writer_first_then_readers_and_again_after_the_ttl() -> None:
    import asyncio

    from ctxprobe.core.prefix import CacheHint
    from ctxprobe.models.caching import PrefixGate

    hint = CacheHint("k", (), size=3)

    async def go(ttl: float) -> list[str]:
        gate, log = PrefixGate(ttl_s=ttl), []
        release = asyncio.Event()

        async def request(name: str, hold: bool) -> None:
            async with gate.enter(hint) as writer:
                log.append(f"{name}:{'write' if writer else 'read'}")
                if hold:
                    await release.wait()

        first = asyncio.create_task(request("a", True))
        await asyncio.sleep(0)
        second = asyncio.create_task(request("b", False))
        for _ in range(5):
            await asyncio.sleep(0)
        log.append("a released")  # b waited for a: it has not entered yet
        release.set()
        await asyncio.gather(first, second)
        await request("c", False)
        assert gate.finished(hint)
        return log

    assert asyncio.run(go(300.0)) == ["a:write", "a released", "b:read", "c:read"]
    # with a TTL of 0 the prefix is stale by the time c comes: c writes it again
    assert asyncio.run(go(0.0))[-1] == "c:write"


def test_prefixes_of_a_server_counted_tokenizer_are_estimated_not_sent() -> None:
    from ctxprobe.cases.prefixes import prefix_counter
    from ctxprobe.tokenizers import resolve_tokenizer

    local = resolve_tokenizer("local")
    assert prefix_counter("local", local)("hello world") == local.count("hello world")
    # anthropic-count:/gemini-count:/endpoint: would ask a server once per prefix: ~4 characters a token
    assert prefix_counter("anthropic-count:claude-sonnet-4-5", local)("x" * 4000) == 1000
