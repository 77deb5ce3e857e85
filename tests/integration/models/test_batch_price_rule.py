"""One batch price, whoever asks: ``plan`` (text and ``--json``), ``run --batch --max-cost``,
the billed cost stored per response, ``prices`` and ``decide`` all go through
:func:`ctxprobe.core.catalog.batch_price`. Where genai-prices has a batch variant its prices
are used (the oracle: the library's own ``calc_price`` with ``processing: batch``); where
it has none but the provider has a batch API, ctxprobe's estimate (the provider's 50%,
its page cited on the profile) is used by all of them and labelled so.

A batch run goes through the official SDKs to the loopback batch fakes
(``fake_batch_apis``), which report the prompt tokens counted with the run's tokenizer, so
the plan's price of each request and the billed one can be compared exactly."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price

from ctxprobe.cli import main
from ctxprobe.core.catalog import Price, batch_price, model_info
from ctxprobe.prices.library import BATCH
from ctxprobe.core.runmeta import RunMeta
from ctxprobe.decide.content import RunTotals
from ctxprobe.decide.runs import RunFacts
from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.caching import NO_CACHE, Billed, CachedTotals
from ctxprobe.prices.table import load_prices, price_for
from ctxprobe.runner.budget import Ledger
from ctxprobe.report.analyse import planned_vs_billed
from ctxprobe.report.rundata import Billing
from ctxprobe.spec import make_spec
from ctxprobe.store import open_existing
from ctxprobe.spec.names import as_ref
from ctxprobe.store.db import RunRecord
from ctxprobe.sweep.pricing import price_plan
from ctxprobe.sweep.run import run_sweep

from fake_batch_apis import FAKES

SECRET = "sk-SENTINEL-batch-price-key-7c1f"
LIBRARY = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}
#: genai-prices 0.2.3 has no batch variant for these (the audit's three) ...
ESTIMATED = ["anthropic:claude-opus-4-1", "openai:gpt-5.3", "gemini:gemini-3.5-flash"]
#: ... and has one for these
LIBRARY_BATCH = ["anthropic:claude-haiku-4-5", "openai:gpt-4.1", "gemini:gemini-2.5-flash"]


def _oracle(model: str, prompt: int, output: int, *, batch: bool) -> float:
    provider, name = model.split(":", 1)
    got = calc_price(Usage(input_tokens=prompt, output_tokens=output), name, provider_id=LIBRARY[provider],
                     price_context=BATCH if batch else None)
    return float(got.input_price + got.output_price)


def _plan_path(model: str, prompt: int, output: int) -> float | None:
    """One request priced by the plan's own code (the grid's totals, batch mode)."""
    totals = CachedTotals(output=output)
    totals.add([Billed(0, 0, prompt)], 1)
    info = model_info(as_ref(model))
    return totals.cost(info if info is not None else price_for(model), "batch", NO_CACHE, model)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", ESTIMATED + LIBRARY_BATCH)
def test_plan_json_batch_price_is_the_librarys_or_the_labelled_estimate(
        model: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = price_for(model)
    assert base is not None
    estimated = model in ESTIMATED
    assert (base.batch_tier is None) == estimated  # what the library itself holds, not assumed
    code = main(["plan", "--model", model, "--lengths", "4k", "--depths", "0.5", "--reps", "2", "--max-tokens", "16",
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    prices = json.loads(out)["prices"]
    sizes = [(s["prompt_tokens"], s["requests"]) for s in prices["by_prompt_size"]]
    assert prices["batch"] is not None and prices["batch"] < prices["on_demand"]
    if estimated:
        assert prices["batch_basis"] == "estimate"
        assert "ctxprobe's estimate: 50% of on demand" in prices["batch_source"]
        assert "batch" in prices["batch_source"].rsplit("; ", 1)[-1]  # the provider's batch page
        want = sum(n * _oracle(model, p, 16, batch=False) for p, n in sizes) / 2
    else:
        assert prices["batch_basis"] == "library" and prices["batch_source"] == "genai-prices' batch price"
        want = sum(n * _oracle(model, p, 16, batch=True) for p, n in sizes)
    assert prices["batch"] == pytest.approx(want, rel=0.01)
    # billing: the ledger of a batch run settles the same requests at the same price
    ledger = Ledger(model, base, max_cost=None, spent=0.0, max_tokens=16, batch=True,
                    tiers=model_info(as_ref(model)))
    billed = sum(n * ledger.settle(_Case(f"c{p}", p), p, 16) for p, n in sizes)  # type: ignore[arg-type,operator]
    assert billed == pytest.approx(prices["batch"], rel=1e-9)


class _Cell:
    reasoning_budget = None


class _Case:
    """What the ledger reads of a case."""

    def __init__(self, case_id: str, tokens: int) -> None:
        self.case_id, self.token_count, self.max_tokens, self.cell = case_id, tokens, 16, _Cell()


def test_plan_text_says_whose_batch_price_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    for model, said in (("openai:gpt-5.3", "(ctxprobe's estimate: 50% of on demand)"),
                        ("openai:gpt-4.1", "(genai-prices' batch price)")):
        assert main(["plan", "--model", model, "--lengths", "2k", "--depths", "0.5", "--reps", "1"]) == 0
        out = capsys.readouterr().out
        (line,) = [x for x in out.splitlines() if x.strip().startswith("batch ")]
        assert "$" in line and said in line and "no batch API" not in out
        assert ("platform.openai.com/docs/guides/batch" in out.replace("\n", "")) == ("estimate" in said)


def test_prices_marks_which_batch_prices_are_estimates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prices", "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out) if r["tier"] == "base"}
    for model in ESTIMATED:
        row = rows[model]
        assert row["batch_basis"] == "estimate" and row["batch"] == 0.5 and "batch" in row["batch_source"]
        assert row["batch_input"] == pytest.approx(row["input"] / 2)
        assert row["batch_output"] == pytest.approx(row["output"] / 2)
    for model in LIBRARY_BATCH:
        row = rows[model]
        assert row["batch_basis"] == "library" and row["batch_source"] == ""
        assert row["batch_input"] == pytest.approx(_oracle(model, 10**6, 0, batch=True))
    assert main(["prices"]) == 0
    text = capsys.readouterr().out.splitlines()
    (opus,) = [x for x in text if x.startswith("anthropic:claude-opus-4-1 ")]
    (gpt41,) = [x for x in text if x.startswith("openai:gpt-4.1 ")]
    assert " 0.5* " in opus and " 0.5x " in gpt41
    assert any("ctxprobe's estimate" in x for x in text) and all(len(x) <= 80 for x in text)


@pytest.mark.parametrize("model", ["openai:gpt-5.3", "openai:gpt-4.1", "anthropic:claude-opus-4-1",
                                   "gemini:gemini-3.5-flash"])
def test_run_batch_caps_and_bills_at_the_plans_batch_price(model: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """--max-cost at the plan's batch price sends the whole grid (OpenAI: no cache-write
    premium, so a case's worst case is its planned cost); a hair under it does not; each
    stored cost is the plan's price of the tokens the server reported."""
    provider = model.split(":", 1)[0]
    pytest.importorskip({"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}[provider])
    cls, key_var, url_var = FAKES[provider]
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(key_var, SECRET)
    data = {"model": model, "tokenizer": "local", "lengths": [512], "depths": [0, 1], "reps": 1, "batch": True,
            "batch_poll": 0.01, "retries": 0, "cache_prompt": "off"}
    planned = price_plan(make_spec(data))
    cap = planned.costs["batch"]
    assert cap is not None and planned.batch is not None and planned.mode == "batch"
    # Anthropic's and Gemini's worst case is a cache write (dearer than a plain token): room for it
    runs = [(cap * 3, 2)] if provider != "openai" else [(cap * (1 - 1e-6), 1), (cap * (1 + 1e-9), 2)]
    for i, (max_cost, sent) in enumerate(runs):
        with cls() as fake:
            monkeypatch.setenv(url_var, fake.url + fake.suffix)
            store = tmp_path / f"s{i}.sqlite"
            result = run_sweep(make_spec({**data, "max_cost": max_cost}), store, progress=False)
        assert result.sent == sent  # OpenAI: the worst case is exactly the planned cost, the cap decides
        db = sqlite3.connect(store)
        rows = db.execute("SELECT cost_usd, reported_prompt_tokens, completion_tokens FROM responses").fetchall()
        db.close()
        assert rows and all(cost == pytest.approx(_plan_path(model, p, c), rel=1e-9) for cost, p, c in rows)
        if model in ESTIMATED:
            assert all(cost == pytest.approx(_oracle(model, p, c, batch=False) / 2, rel=1e-9) for cost, p, c in rows)
        else:
            assert all(cost == pytest.approx(_oracle(model, p, c, batch=True), rel=1e-9) for cost, p, c in rows)
        # the report's planned-vs-billed note: the plan the run stored, its batch price labelled
        with open_existing(store) as st:
            stored = st.require_run(result.run_id).meta.planned_cost
        assert stored is not None and stored["costs"]["batch"] == pytest.approx(cap)
        assert stored["batch_basis"] == planned.batch.basis
        note = planned_vs_billed(stored, Billing(usd=sum(r[0] for r in rows), prompt=sum(r[1] for r in rows),
                                                 responses=len(rows)))
        assert note is not None and f"planned ${cap:,.4f}" in note and "at the batch price" in note
        assert ("(ctxprobe's estimate) for the whole grid" in note) == (model in ESTIMATED)


def test_no_batch_api_means_no_batch_price_and_no_batch_cap(tmp_path: Path) -> None:
    """A provider with no batch API (sim) has no batch price unless a price file gives its
    factor; a batch ledger with no batch price refuses --max-cost rather than bill on demand."""
    assert batch_price(Price(1.0, 2.0), "sim").basis == "unknown"
    assert batch_price(Price(1.0, 2.0), "sim").price is None
    given = batch_price(Price(1.0, 2.0, batch=0.4), "sim")
    assert given.basis == "price file" and given.price == Price(0.4, 0.8)
    with pytest.raises(CtxprobeError, match="no batch price is known for sim:perfect, so --max-cost"):
        Ledger("sim:perfect", Price(1.0, 2.0), max_cost=1.0, spent=0.0, max_tokens=16, batch=True)


def test_a_price_files_tiers_take_its_batch_factor(tmp_path: Path) -> None:
    """The plan and the ledger bill a long prompt's tier at the entry's batch factor (the
    plan had none for the tier, the ledger copied the base's)."""
    f = tmp_path / "prices.yaml"
    f.write_text("openai:m: {input: 1, output: 2, batch: 0.4, tiers: [{above: 1000, input: 3, output: 4}]}\n")
    table = load_prices(f)
    info = table["openai:m"]
    totals = CachedTotals(output=10)
    totals.add([Billed(0, 0, 2000)], 1)
    planned = totals.cost(info, "batch", NO_CACHE, "openai:m")
    ledger = Ledger("openai:m", price_for("openai:m", table), max_cost=None, spent=0.0, max_tokens=10, batch=True,
                    tiers=info)
    assert planned == pytest.approx((2000 * 3 + 10 * 4) * 0.4 / 1e6)
    assert ledger.settle(_Case("c", 2000), 2000, 10) == pytest.approx(planned)  # type: ignore[arg-type]


def _facts(model: str, batch: bool) -> RunFacts:
    run = RunRecord("r1", "", "", model, "local", "niah", "0", {}, RunMeta(transport={"batch": batch}), "done")
    return RunFacts(run, {}, RunTotals(prompt_tokens=1_000_000, output_tokens=100_000, responses=10),
                    price_for(model), None, False)


@pytest.mark.parametrize("model", ["openai:gpt-5.3", "openai:gpt-4.1"])
def test_decide_prices_an_unbilled_batch_run_at_the_batch_price(model: str) -> None:
    on_demand, how = _facts(model, False).cost()
    assert how == "list price" and on_demand == pytest.approx(_oracle(model, 1_000_000, 100_000, batch=False))
    batched, how = _facts(model, True).cost()
    basis = batch_price(price_for(model), "openai")  # type: ignore[arg-type]
    assert how == f"list batch price, {basis.label()}"
    want = _oracle(model, 1_000_000, 100_000, batch=True) if basis.basis == "library" else on_demand / 2  # type: ignore[operator]
    assert batched == pytest.approx(want)
