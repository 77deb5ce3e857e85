"""One answer for a model without a price, at every place a price is shown or counted:
``plan``'s line, ``--max-cost``'s ledger and ``decide``'s ranking read the same look-up
(:func:`ctxprobe.prices.table.price_for`), and "no price known" is never $0, a simulated or
local (free) provider's model included, until a price file prices it; then all agree on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.prices.table import Price, input_price, load_prices, price_for
from ctxprobe.runner.budget import Ledger
from ctxprobe.spec.names import as_ref
from ctxprobe.spec.schema import make_spec
from ctxprobe.sweep.plan_report import plan_report

UNPRICED = ("sim:decay", "local", "llamacpp:/m/x.gguf", "hf:/m/qwen", "openai-compat:mine@http://127.0.0.1:9/v1",
            "openai:no-such-model-xyz")


@pytest.mark.parametrize("model", UNPRICED)
def test_a_model_without_a_price_has_none_everywhere(model: str) -> None:
    table = load_prices(None)
    assert price_for(model, table) is None
    assert input_price(as_ref(model), table) is None  # decide's column
    with pytest.raises(CtxprobeError, match="no price is known"):
        Ledger(model, price_for(model, table), max_cost=1.0, spent=0.0, max_tokens=16)


def test_the_plan_says_unknown_never_zero_dollars(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no user price file
    spec = make_spec({"model": "sim:decay", "lengths": "1k", "depths": [0.5], "reps": 1})
    report = plan_report(spec)
    text = "\n".join(report.lines())
    assert report.summary.cost_usd is None
    assert "price: unknown for sim:decay: add it to a price file" in text
    assert "$0" not in text


def test_a_price_file_prices_it_for_plan_ledger_and_decide_alike(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text('"sim:decay": {input: 2.0, output: 4.0}\n', encoding="utf-8")
    table = load_prices(prices)
    assert price_for("sim:decay", table) == Price(2.0, 4.0)
    assert input_price(as_ref("sim:decay"), table) == 2.0
    ledger = Ledger("sim:decay", price_for("sim:decay", table), max_cost=1.0, spent=0.0, max_tokens=16)
    assert ledger.price == Price(2.0, 4.0)
    spec = make_spec({"model": "sim:decay", "lengths": "1k", "depths": [0.5], "reps": 1,
                      "prices": str(prices)})
    report = plan_report(spec)
    assert report.summary.cost_usd is not None and report.summary.cost_usd > 0
    assert "at $2 / $4 per 1M input / output tokens" in "\n".join(report.lines())
