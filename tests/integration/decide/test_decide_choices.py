"""ctxprobe decide on sims of known behaviour and price: the choice per band is the truth,
computed here from the sims' documented behaviour, never from decide's code."""

from __future__ import annotations

import json

import pytest

from decide_sims import PRICED
from ctxprobe.cli import main

LENGTHS = [2048, 4096, 8192]


def true_effective_length(model: str) -> int:
    """sim/model.py: sim:perfect is always right; sim:decay?cliff=C&width=W is right with
    probability 1 up to C prompt tokens and 0 from C + W. A case of length L is built to L
    prompt tokens, so the effective length is the longest L <= C (all L for perfect)."""
    if model == "sim:perfect":
        return max(LENGTHS)
    options = dict(part.split("=") for part in model.split("?", 1)[1].split("&"))
    cliff = int(options["cliff"])
    return max((L for L in LENGTHS if L <= cliff), default=0)


def true_choice(start: int, band: int) -> str | None:
    """The band (start, band]: the cheapest model right at every length inside it."""
    able = [m for m in PRICED if true_effective_length(m) >= max(L for L in LENGTHS if start < L <= band)]
    return min(able, key=PRICED.__getitem__) if able else None


def _decide_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main(["decide", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cheapest_model_that_meets_the_bar_per_band(priced_sims, capsys) -> None:
    store, prices, ids = priced_sims
    out = _decide_json(capsys, *ids.values(), "--store", str(store), "--prices", str(prices),
                       "--bands", "2k,4k,8k")
    got = {(c["family"], c["band"]): (c["choice"], c["meets"]) for c in out["choices"]}
    for start, band in zip([0, *LENGTHS], LENGTHS):
        assert got[("niah", band)] == (true_choice(start, band), "yes")
    # the shape of the recommendation: $1 up to 2K, $2 up to 4K, $10 up to 8K
    assert [got[("niah", b)][0] for b in LENGTHS] == [
        "sim:decay?cliff=3000&width=1", "sim:decay?cliff=6000&width=1", "sim:perfect"]
    at_8k = {c["model"]: c["meets"] for c in next(c for c in out["choices"] if c["band"] == 8192)["candidates"]}
    assert at_8k == {"sim:perfect": "yes", "sim:decay?cliff=3000&width=1": "no",
                     "sim:decay?cliff=6000&width=1": "no"}


def test_prices_and_costs_come_from_the_price_file(priced_sims, capsys) -> None:
    store, prices, ids = priced_sims
    out = _decide_json(capsys, *ids.values(), "--store", str(store), "--prices", str(prices))
    by_model = {r["model"]: r for r in out["runs"]}
    for model, usd in PRICED.items():
        run = by_model[model]
        assert run["input_price_per_1m"] == usd
        assert run["cost_basis"] == "list price"  # sims bill nothing: the run's tokens at the file's price
        assert run["cost_usd"] > 0
        # 90 cases of 2K + 4K + 8K tokens (30 each), at most a few tokens short of each budget
        assert run["prompt_tokens"] <= 30 * sum(LENGTHS)
        assert run["cost_usd"] == pytest.approx(run["prompt_tokens"] * usd / 1e6, rel=0.02)


def test_a_band_past_every_tested_length_is_untested_never_a_pass(priced_sims, capsys) -> None:
    store, prices, ids = priced_sims
    out = _decide_json(capsys, *ids.values(), "--store", str(store), "--prices", str(prices), "--bands", "16k")
    (choice,) = out["choices"]
    assert choice["choice"] is None and choice["meets"] == "no"
    meets = {c["model"]: c["meets"] for c in choice["candidates"]}
    assert meets["sim:perfect"] == "untested"  # clears 8K, never tried at 16K
    assert meets["sim:decay?cliff=3000&width=1"] == "no"  # already fails at 4K


def test_between_a_cleared_and_a_failed_length_is_maybe(priced_sims, capsys) -> None:
    store, prices, ids = priced_sims
    out = _decide_json(capsys, ids["sim:decay?cliff=3000&width=1"], "--store", str(store), "--prices",
                       str(prices), "--bands", "2048,2049,4095,4096")
    meets = [c["candidates"][0]["meets"] for c in out["choices"]]
    # clears 2,048 with 95% confidence, fails 4,096: (2,048, 4,095] is covered by no length it clears
    assert meets == ["yes", "maybe", "maybe", "no"]


def test_text_output_names_choices_and_limits(priced_sims, capsys) -> None:
    store, prices, ids = priced_sims
    capsys.readouterr()
    assert main(["decide", *ids.values(), "--store", str(store), "--prices", str(prices), "--bands", "2k,8k,16k",
                 "--use", "niah"]) == 0
    text = capsys.readouterr().out
    assert "niah up to 2K tokens: B sim:decay?cliff=3000&width=1 at $1.00" in text
    assert "niah 2K-8K tokens: A sim:perfect at $10.00" in text
    assert "niah 8K-16K tokens: untested: no run was tested that long" in text
    assert "prompt limit 8,192 tokens" in text
    assert all(len(line) <= 80 for line in text.splitlines())
