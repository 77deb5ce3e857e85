from __future__ import annotations

import asyncio

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.sim.server import SimServer
from ctxprobe.plan.grid import summarize
from ctxprobe.prices.table import Price, load_prices, price_for
from ctxprobe.store import iter_export
from ctxprobe.runner.limits import TokenBucket
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer


def test_plan_input_tokens_equal_sum_of_targets() -> None:
    spec = make_spec({"model": "openai:gpt-4o-mini", "lengths": "4k,8k,16k,32k,64k,128k", "reps": 20})
    plan = summarize(spec, price_for(spec.model))
    assert plan.requests == 6 * 5 * 20
    # 252 "K" per depth and repetition; K = 1,024 tokens → 258,048 × 100
    assert plan.input_tokens == (4 + 8 + 16 + 32 + 64 + 128) * 1024 * 100 == 25_804_800
    # Worked by hand, not with the function under test: gpt-4o-mini lists $0.15 / $0.60
    # per 1M input / output tokens; 600 requests x 48 max output tokens = 28,800 tokens.
    # 25,804,800 x 0.15 / 1e6 = 3.87072 and 28,800 x 0.60 / 1e6 = 0.01728 -> 3.888
    assert plan.max_output_tokens == 28_800
    assert plan.cost_usd == pytest.approx(3.888, abs=1e-9)


def test_price_file_extends_and_errors(tmp_path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("myco:model-x: {input: 1.0, output: 2.0}\n")
    table = load_prices(f)
    assert price_for("myco:model-x", table) == Price(1.0, 2.0)
    assert price_for("local", table) is None  # a free provider without a price: no price known, not $0
    assert price_for("nobody:knows", table) is None
    f.write_text("oops: 3\n")
    with pytest.raises(CtxprobeError, match="must map"):
        load_prices(f)


def test_token_bucket_waits_for_refill() -> None:
    async def go() -> tuple[float, float]:
        bucket = TokenBucket(600)  # 10 per second, burst of 600
        first = await bucket.acquire(600)
        second = await bucket.acquire(5)  # bucket empty: needs 0.5 s of refill
        return first, second

    first, second = asyncio.run(go())
    assert first == 0.0
    assert second >= 0.49


def test_max_cost_stops_before_the_cap(tmp_path, case_requests) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = server.start()
        model = f"openai-compat:sim@{url}"
        prices = tmp_path / "prices.yaml"
        prices.write_text(f'"{model}": {{input: 1000.0, output: 0.0}}\n')  # $1 per 1K tokens
        spec = make_spec({"model": model, "tokenizer": "local", "lengths": "512", "depths": "0,0.5,1", "reps": 2,
                          "max_cost": 1.6, "prices": str(prices), "concurrency": 1})
        result = run_sweep(spec, tmp_path / "s.sqlite", progress=False)
        with Store(tmp_path / "s.sqlite") as store:
            spent = store.spent(result.run_id)
        # each case costs ~$0.5: three fit under $1.6, the fourth would cross it
        assert 0 < spent <= 1.6
        assert result.sent == 3 == case_requests(server)
        costs = [r["cost_usd"] for r in iter_export(result.run_id, tmp_path / "s.sqlite") if r["outcome"]]
        assert len(costs) == 3 and all(c > 0.4 for c in costs)


def test_max_cost_needs_a_price(tmp_path) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        spec = make_spec({"model": f"openai-compat:sim@{server.start()}", "tokenizer": "local",
                          "lengths": "512", "max_cost": 1.0})
        with pytest.raises(CtxprobeError, match="no price is known"):
            run_sweep(spec, tmp_path / "s.sqlite", progress=False)
