"""Prices by prompt length, retired models, price files, stale tables and windows.

Tier rule, from the providers' pages: Anthropic bills a request whose input is over
200,000 tokens ("> 200K input tokens", docs.anthropic.com/en/docs/about-claude/pricing,
long-context pricing) and Google a prompt over 200,000 tokens ("prompts > 200k tokens",
ai.google.dev/gemini-api/docs/pricing) entirely at the long-context price: 200,000 is
still the base tier, 200,001 is not."""

from __future__ import annotations

from ctxprobe.spec.names import as_ref

import datetime as dt
from pathlib import Path

import pytest

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.catalog import STALE_DAYS, age_note, check_model, context_window, model_info
from ctxprobe.errors import CtxprobeError
from ctxprobe.prices.listing import price_lines, price_problems, price_rows
from ctxprobe.prices.table import Price, load_prices, price_for
from ctxprobe.runner.budget import Ledger
from ctxprobe.spec.schema import make_spec
from ctxprobe.sweep.plan_report import plan_report
from ctxprobe.sweep.run import run_sweep

DEC_3 = dt.date(2026, 12, 3)


def rates(model: str, prompt: int) -> tuple[float, float]:
    """USD per 1M input / output tokens genai-prices bills a request of ``prompt`` prompt
    tokens at (its own calc_price, the oracle: ctxprobe's tiers are read from its data)."""
    from genai_prices import Usage, calc_price

    provider, name = model.split(":", 1)
    library = {"gemini": "google"}.get(provider, provider)
    got = calc_price(Usage(input_tokens=prompt, output_tokens=1_000_000), name.split("?")[0], provider_id=library)
    return float(got.input_price) * 1e6 / prompt, float(got.output_price)


@pytest.mark.parametrize("model", ["gemini:gemini-2.5-pro", "anthropic:claude-sonnet-4-5",
                                   "gemini:gemini-3-pro-preview", "openai:gpt-5.5"])
def test_tier_boundary_is_where_the_library_puts_it(model: str) -> None:
    """Each tier bills a prompt over its start (the library's rule, and the providers'):
    the start itself is still the lower tier, one token more is not."""
    info = model_info(as_ref(model))
    assert info is not None and len(info.prices) == 2, info
    start = info.prices[1].above
    assert start in (200_000, 272_000)  # Google's and Anthropic's 200K, OpenAI's 272K (GPT-5.5)

    def at(n: int | None) -> tuple[float, float]:
        price = price_for(model, prompt_tokens=n)
        assert price is not None
        return price.input, price.output

    assert at(None) == at(1) == at(start - 1) == at(start) == pytest.approx(rates(model, start))
    assert at(start + 1) == at(1_000_000) == pytest.approx(rates(model, start + 1))
    assert at(start + 1) != at(start)
    assert price_for(model, prompt_tokens=start + 1).above == start  # type: ignore[union-attr]


def test_long_tier_caching_prices_are_the_librarys() -> None:
    from genai_prices import Usage, calc_price

    long = price_for("anthropic:claude-sonnet-4-5", prompt_tokens=300_000)
    assert long is not None
    # a request of 300K prompt tokens, 100K of them read from the cache and 100K written to it
    got = calc_price(Usage(input_tokens=300_000, cache_read_tokens=100_000, cache_write_tokens=100_000),
                     "claude-sonnet-4-5", provider_id="anthropic")
    assert long.cost(300_000, 0, cached=100_000, written=100_000) == pytest.approx(float(got.total_price))
    assert long.cached_input is not None and long.cache_write is not None and long.cache_write_1h is not None
    assert price_for("openai:gpt-4.1", prompt_tokens=900_000) == price_for("openai:gpt-4.1")  # no tiers


def _spec(model: str, lengths: str, **extra: object) -> object:
    return make_spec({"model": model, "lengths": lengths, "depths": [0.5], "reps": 1, **extra})


@pytest.mark.parametrize("model", ["gemini:gemini-2.5-pro", "openai:gpt-5.5"])
def test_a_256k_or_300k_grid_is_priced_at_the_long_context_tier(model: str) -> None:
    length = 300_000
    report = plan_report(_spec(model, str(length)))  # type: ignore[arg-type]
    out = 48  # the default output limit
    tier = rates(model, length)
    assert report.summary.input_tokens == length
    assert report.summary.cost_usd == pytest.approx((length * tier[0] + out * tier[1]) / 1e6)
    totals = report.prices.totals
    assert totals is not None and 272_000 < totals.prompt <= length
    assert report.prices.costs["on-demand"] == pytest.approx((totals.prompt * tier[0] + out * tier[1]) / 1e6)


def test_each_request_is_priced_at_its_own_tier() -> None:
    """A 128K + 256K grid: the 128K case at the base price, the 256K one at the long one."""
    model = "gemini:gemini-2.5-pro"
    report = plan_report(_spec(model, "128k,256k"))  # type: ignore[arg-type]
    lo, hi = rates(model, 131_072), rates(model, 262_144)
    assert lo != hi
    assert report.summary.cost_usd == pytest.approx((131_072 * lo[0] + 48 * lo[1] + 262_144 * hi[0] + 48 * hi[1]) / 1e6)
    totals = report.prices.totals
    assert totals is not None and len(totals.parts) == 2
    want = sum(size * rates(model, size)[0] + 48 * rates(model, size)[1] for size in totals.parts) / 1e6
    assert report.prices.costs["on-demand"] == pytest.approx(want)


def test_the_ledger_bills_each_response_at_its_tier() -> None:
    model = "gemini:gemini-2.5-pro"
    info = model_info(as_ref(model))
    ledger = Ledger(model, price_for(model), max_cost=None, spent=0.0, max_tokens=10, tiers=info)
    case = Case(Cell("niah", 256 * 1024, 0.5), 0, 0, [{"role": "user", "content": "x"}], ["a"], token_count=250_000)
    lo, hi = rates(model, 200_000), rates(model, 200_001)
    assert ledger.settle(case, 200_000, 10) == pytest.approx((200_000 * lo[0] + 10 * lo[1]) / 1e6)
    assert ledger.settle(case, 200_001, 10) == pytest.approx((200_001 * hi[0] + 10 * hi[1]) / 1e6)


@pytest.mark.parametrize("model", ["anthropic:claude-3-5-haiku-latest", "anthropic:claude-3-5-sonnet-latest",
                                   "anthropic:claude-3-7-sonnet-latest", "gemini:gemini-2.0-flash",
                                   "gemini:gemini-1.5-flash", "gemini:gemini-1.5-pro"])
def test_retired_models_are_refused_in_one_line(model: str, tmp_path: Path) -> None:
    with pytest.raises(CtxprobeError, match=f"^{model} is retired: [^\n]+$"):
        plan_report(_spec(model, "1k"))  # type: ignore[arg-type]
    with pytest.raises(CtxprobeError, match="is retired"):
        run_sweep(_spec(model, "1k"), tmp_path / "s.sqlite", progress=False)  # type: ignore[arg-type]
    assert not (tmp_path / "s.sqlite").exists()  # refused before the store is opened
    assert price_for(model) is not None  # still priced: old runs' bills


def test_a_deprecated_model_is_said_not_refused() -> None:
    assert "deprecated" in (check_model(as_ref("anthropic:claude-sonnet-4-5")) or "")
    assert check_model(as_ref("anthropic:claude-haiku-4-5")) is None and check_model(as_ref("sim:perfect")) is None


def test_a_price_file_prices_any_model_with_tiers(tmp_path: Path) -> None:
    f = tmp_path / "prices.yaml"
    f.write_text("sim:perfect: {input: 1.0, output: 2.0, window: 4096, tiers: [{above: 1000, input: 3, output: 4}]}\n"
                 "local: {input: 0.5, output: 0.5}\n"
                 "llamacpp:/m/x.gguf: {input: 0.25, output: 0.25}\n"
                 "openai-compat:qwen: {input: 0.1, output: 0.2}\n")
    table = load_prices(f)
    assert price_for("sim:perfect", table) == Price(1.0, 2.0)
    assert price_for("sim:perfect", table, prompt_tokens=1000) == Price(1.0, 2.0)
    assert price_for("sim:perfect", table, prompt_tokens=1001) == Price(3.0, 4.0, above=1000)
    assert price_for("local", table) == Price(0.5, 0.5)
    assert price_for("llamacpp:/m/x.gguf", table) == Price(0.25, 0.25)
    assert price_for("openai-compat:qwen@http://127.0.0.1:8000/v1", table) == Price(0.1, 0.2)
    assert price_for("sim:echo", table) is None  # not in the file: no price known (never $0)
    assert context_window(as_ref("sim:perfect"), table) == 4096
    report = plan_report(_spec("sim:perfect", "1k", prices=str(f)))  # type: ignore[arg-type]
    assert report.summary.cost_usd is not None and report.summary.cost_usd > 0
    assert "prices of your price file" in "\n".join(report.lines())


def test_lengths_past_the_window_are_refused_by_plan_and_run(tmp_path: Path) -> None:
    f = tmp_path / "prices.yaml"
    f.write_text("sim:perfect: {input: 0, output: 0, window: 2000}\n")
    with pytest.raises(CtxprobeError, match="^length 4,096 \\+ 48 output tokens exceeds sim:perfect's window of 2,000"):
        plan_report(_spec("sim:perfect", "4k", prices=str(f)))  # type: ignore[arg-type]
    with pytest.raises(CtxprobeError, match="^length 4,096 \\+ 48 output tokens exceeds sim:perfect's window of 2,000 "):
        run_sweep(_spec("sim:perfect", "4k", prices=str(f)), tmp_path / "s.sqlite",  # type: ignore[arg-type]
                  progress=False)
    # Sonnet 4.5's window is the library's 200K: its 1M beta is retired (refused as an option)
    with pytest.raises(CtxprobeError, match="^length 307,200 \\+ 48 output tokens exceeds "
                                            "anthropic:claude-sonnet-4-5's window of 200,000 tokens; [^\n]+$"):
        plan_report(_spec("anthropic:claude-sonnet-4-5", "300k"))  # type: ignore[arg-type]
    with pytest.raises(CtxprobeError, match="context_1m.*retired on 2026-04-30"):
        plan_report(_spec("anthropic:claude-sonnet-4-5?context_1m=true", "100k"))  # type: ignore[arg-type]
    assert context_window(as_ref("openai:gpt-4o")) == 128_000 and context_window(as_ref("openai:gpt-5")) == 400_000
    assert context_window(as_ref("anthropic:claude-opus-4-7")) == 1_000_000 and context_window(as_ref("sim:perfect")) is None
    assert context_window(as_ref("gemini:gemini-2.5-pro")) is None  # the library gives none: the run asks the server


def test_stale_prices_warn_past_90_days(tmp_path: Path) -> None:
    """A price file's dated entries go stale; the library's are as current as the installed
    genai-prices (their date is when the price took effect, not when it was read)."""
    day = DEC_3 - dt.timedelta(days=STALE_DAYS)
    assert age_note(day.isoformat(), today=DEC_3) is None
    late = age_note((day - dt.timedelta(days=1)).isoformat(), today=DEC_3)
    assert late is not None and f"{STALE_DAYS + 1} days old" in late
    f = tmp_path / "prices.yaml"
    f.write_text("openai:my-old: {input: 1, output: 2, as_of: '2025-11-15'}\n")
    rows = price_rows(load_prices(f))
    problems = price_problems(rows, today=DEC_3)
    assert "openai:my-old: read 2025-11-15, 383 days ago" in problems
    assert any(p.startswith("gemini:gemini-2.0-flash:") and p.endswith("retired") for p in problems)
    assert not any(p.startswith("gemini:gemini-2.5-pro:") for p in problems)
    assert all(len(line) <= 80 for line in price_lines(rows))


def test_plan_warns_of_a_stale_price_file(tmp_path: Path) -> None:
    f = tmp_path / "prices.yaml"
    f.write_text("gemini:gemini-2.5-flash-lite: {input: 1, output: 2, as_of: '2025-11-15'}\n")
    report = plan_report(_spec("gemini:gemini-2.5-flash-lite", "1k", prices=str(f)))  # type: ignore[arg-type]
    assert any("prices read on 2025-11-15 are" in w and "days old (over 90)" in w for w in report.warnings)
    report = plan_report(_spec("gemini:gemini-2.5-flash-lite", "1k"))  # type: ignore[arg-type]
    assert not any("days old" in w for w in report.warnings)
