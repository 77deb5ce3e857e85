"""Hosted prices and windows come from genai-prices, offline, priced as the library prices.

The oracle throughout is the library's own ``genai_prices.calc_price`` (version pinned
from below in pyproject: ``genai-prices>=0.2.3``), called on the same requests ctxprobe's
plan says it will send; nothing here restates a price by hand."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from ctxprobe.cli import main
from ctxprobe.spec.names import as_ref
from ctxprobe.core.catalog import batch_price, check_model, model_info
from ctxprobe.prices.library import BATCH, library_models, library_version, snapshot
from ctxprobe.errors import CtxprobeError
from ctxprobe.prices.table import price_for

#: ctxprobe provider → genai-prices provider (each profile's ``price_library``).
LIBRARY = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}
#: Today's models, the issue's and others it does not name, one plan each.
TODAY = ["anthropic:claude-opus-4-7", "anthropic:claude-sonnet-4-6", "anthropic:claude-fable-5",
         "anthropic:claude-haiku-5-5", "openai:gpt-5.5", "openai:gpt-5.4-mini", "openai:gpt-4.1",
         "openai:gpt-5-pro", "gemini:gemini-3.8-flash", "gemini:gemini-2.5-flash", "gemini:gemini-3.1-flash-lite",
         # tiered: Gemini 2.5 Pro's prompts over 200K (no window in the library: the run asks the
         # endpoint), GPT-5.4's over 272K; every other library model: test_library_plan_every_model.py
         "gemini:gemini-2.5-pro", "openai:gpt-5.4"]


def _oracle(model: str, prompt: int, output: int, *, batch: bool = False, cached: int = 0) -> float:
    provider, name = model.split(":", 1)
    got = calc_price(Usage(input_tokens=prompt, output_tokens=output, cache_read_tokens=cached or None),
                     name, provider_id=LIBRARY[provider], price_context=BATCH if batch else None)
    return float(got.input_price + got.output_price)


def _has_batch(model: str) -> bool:
    return model_info(as_ref(model)).prices[0].batch_tier is not None  # type: ignore[union-attr]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Any connection attempt is recorded and refused: prices must come from the installed data."""
    tried: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        tried.append(address)
        raise OSError("offline test: no network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield tried


def _plan_json(capsys: pytest.CaptureFixture[str], model: str, lengths: str) -> tuple[int, Any, str]:
    code = main(["plan", "--model", model, "--lengths", lengths, "--depths", "0.5", "--reps", "4",
                 "--max-tokens", "16", "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


@pytest.mark.parametrize("model", TODAY)
def test_plan_json_prices_100k_and_300k_as_calc_price_does(model: str, capsys: pytest.CaptureFixture[str],
                                                           offline: list[Any]) -> None:
    """Done-when of the issue: 4 prompts of 100K and 4 of 300K tokens, 16 output tokens each,
    priced at what calc_price gives for the same requests (within 1%)."""
    info = model_info(as_ref(model))
    assert info is not None and info.library == library_version()
    lengths = "100k,300k" if (info.window or 0) >= 300 * 1024 + 16 else "100k"
    code, plan, err = _plan_json(capsys, model, lengths)
    assert code == 0, err
    prices = plan["prices"]
    assert plan["requests"] == prices["requests"] == 4 * len(lengths.split(","))
    assert plan["output_tokens"] == prices["output_tokens"] == 16 * plan["requests"]
    sizes = prices["by_prompt_size"]
    assert sum(s["requests"] for s in sizes) == plan["requests"]
    assert sum(s["prompt_tokens"] * s["requests"] for s in sizes) == prices["prompt_tokens"]
    want = sum(s["requests"] * _oracle(model, s["prompt_tokens"], 16) for s in sizes)
    assert prices["on_demand"] == pytest.approx(want, rel=0.01)
    # and the same against the lengths asked for, not only the plan's own counts
    asked = [102_400] * 4 + ([307_200] * 4 if "300k" in lengths else [])
    assert prices["on_demand"] == pytest.approx(sum(_oracle(model, n, 16) for n in asked), rel=0.01)
    if _has_batch(model):
        want_batch = sum(s["requests"] * _oracle(model, s["prompt_tokens"], 16, batch=True) for s in sizes)
        assert prices["batch_basis"] == "library"
    else:  # the provider's batch discount, as ctxprobe's estimate (tests/integration/models/test_batch_price_rule.py)
        want_batch = sum(s["requests"] * _oracle(model, s["prompt_tokens"], 16) for s in sizes) / 2
        assert prices["batch_basis"] == "estimate"
    assert prices["batch"] == pytest.approx(want_batch, rel=0.01)
    assert prices["batch"] < prices["on_demand"]
    assert prices["library"] == library_version() and prices["library_model"] == info.library_id
    assert prices["source"].startswith(library_version())
    source = f"{library_version()} ({info.library_id})" if info.window is not None else None
    assert plan["window"] == {"tokens": info.window, "source": source}
    assert not offline


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-5", "openai:gpt-4o", "anthropic:claude-haiku-4-5"])
def test_a_length_past_the_librarys_window_is_refused_in_one_line(model: str, capsys: pytest.CaptureFixture[str]
                                                                   ) -> None:
    window = model_info(as_ref(model)).window  # type: ignore[union-attr]
    assert window is not None and window < 300 * 1024
    code, _, err = _plan_json(capsys, model, "100k,300k")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert f"exceeds {model}'s window of {window:,} tokens" in line


@pytest.mark.parametrize("provider", sorted(LIBRARY))
def test_every_model_the_library_prices_is_priced_as_calc_price_does(provider: str, offline: list[Any]) -> None:
    """Over every model of the provider in the library (not a hand-picked few): plain,
    cached and batch requests on both sides of every tier start."""
    models = library_models(LIBRARY[provider])
    assert len(models) > 20
    checked = 0
    for found in models:
        model = f"{provider}:{found.name}"
        starts = sorted({0, *(t["above"] for t in found.tiers)})
        for prompt in {1_000, 100_000, 300_000, *(s + 1 for s in starts), *(s for s in starts if s)}:
            price = price_for(model, prompt_tokens=prompt)
            assert price is not None, model
            assert price.cost(prompt, 16) == pytest.approx(_oracle(model, prompt, 16), rel=1e-9), (model, prompt)
            if price.cached_input is not None:
                got = price.cost(prompt, 16, cached=prompt // 2)
                assert got == pytest.approx(_oracle(model, prompt, 16, cached=prompt // 2), rel=1e-9), model
            batch = batch_price(price, provider)  # the one rule plan, billing and prices use
            assert batch.price is not None, model  # the library's, else the provider's discount
            if price.batch_tier is not None:
                assert batch.basis == "library"
                want = _oracle(model, prompt, 16, batch=True)
            else:  # ctxprobe's estimate: half of what the library bills on demand
                assert batch.basis == "estimate" and batch.factor == 0.5
                want = _oracle(model, prompt, 16) / 2
            assert batch.price.cost(prompt, 16) == pytest.approx(want, rel=1e-9), (model, prompt)
            checked += 1
    assert checked > 3 * len(models)
    assert not offline


def test_the_library_is_never_asked_to_fetch(offline: list[Any]) -> None:
    """genai-prices fetches only through ``UpdatePrices``; ctxprobe never starts it and
    refuses a snapshot that came from one."""
    from genai_prices import data_snapshot

    assert snapshot().from_auto_update is False
    fetched = data_snapshot.DataSnapshot(providers=snapshot().providers, from_auto_update=True)
    data_snapshot.set_custom_snapshot(fetched)
    try:
        with pytest.raises(CtxprobeError, match="offline from the installed version's data"):
            snapshot()
    finally:
        data_snapshot.set_custom_snapshot(None)
    assert not offline


def test_a_price_file_still_overrides_the_library(tmp_path: Any) -> None:
    from ctxprobe.prices.table import load_prices

    f = tmp_path / "prices.yaml"
    f.write_text("openai:gpt-5.5: {input: 1, output: 2, window: 50000}\n")
    table = load_prices(f)
    assert (price_for("openai:gpt-5.5", table).input, price_for("openai:gpt-5.5", table).output) == (1, 2)  # type: ignore[union-attr]
    assert price_for("openai:gpt-5.5").input != 1  # type: ignore[union-attr]
    from ctxprobe.core.catalog import context_window

    assert context_window(as_ref("openai:gpt-5.5"), table) == 50_000


def test_a_model_the_library_marks_deprecated_is_named_so() -> None:
    deprecated = [m for m in library_models("google") if m.deprecated and m.name.startswith("gemini")
                  and not model_info(as_ref(f"gemini:{m.name}")).retired]  # type: ignore[union-attr]
    assert deprecated  # gemini-2.0-flash-lite and gemini-3-pro-preview in 0.2.3
    name = deprecated[0].name
    note = check_model(as_ref(f"gemini:{name}"))
    assert note == f"gemini:{name} is deprecated: marked deprecated in {library_version()}"


def test_prices_json_names_the_library_its_date_and_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prices", "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    opus = rows["anthropic:claude-opus-4-7"]
    assert opus["library"] == library_version() and "anthropic/claude-opus-4-7" in opus["source"]
    assert opus["batch_input"] == pytest.approx(opus["input"] / 2)
    o3 = rows["openai:o3"]  # the library dates o3's price cut
    assert o3["as_of"] == "2025-06-10" and o3["input"] == pytest.approx(_oracle("openai:o3", 10**6, 0))
    # Vertex's Claude models (the library's google provider) are not listed as gemini models
    assert not any(m.startswith("gemini:claude") for m in rows)
    assert "gemini:gemini-3.8-flash" in rows and "openai:gpt-5.5" in rows


def test_prices_lists_served_models_before_deprecated_and_retired_ones() -> None:
    from ctxprobe.prices.listing import library_rows

    rows = library_rows()
    rank = [(r.status.startswith("retired"), r.status.startswith("deprecated")) for r in rows]
    assert rank == sorted(rank)  # no retired model before a served one
    assert rows[0].status == "" and rows[-1].status.startswith("retired")
    names = [r.model for r in rows]
    assert names.index("anthropic:claude-opus-4-7") < names.index("anthropic:claude-3-5-haiku-latest")


@pytest.mark.parametrize("model, note", [
    ("anthropic:claude-3-5-sonnet-20241022", "claude-3-5-sonnet-latest"),
    ("anthropic:claude-3-7-sonnet-20250219", "claude-3-7-sonnet-latest"),
    ("anthropic:claude-3-haiku-20240307", "claude-3-haiku"),
    ("anthropic:claude-3-opus-20240229", "claude-3-opus-latest"),
    ("anthropic:claude-2.1", "claude-2"),
    ("gemini:gemini-2.0-flash-001", "gemini-2.0-flash"),
])
def test_a_retired_models_dated_id_is_refused_as_its_note_says(model: str, note: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A retirement note holds for every name the library reads as the same model (the
    library priced these dated ids; plan planned them as served before)."""
    from ctxprobe.core.catalog import provider_info

    provider = model.split(":", 1)[0]
    (written,) = [m for m in provider_info(provider).models if m.name == note]
    assert written.retired and model.split(":", 1)[1] not in (written.name, *written.aliases)
    with pytest.raises(CtxprobeError, match=f"^{model} is retired: "):
        check_model(as_ref(model))
    code, _, err = _plan_json(capsys, model, "1k")
    assert code == 2 and err.strip() == f"error: {model} is retired: {written.retired}"


def test_a_served_models_dated_id_takes_no_other_models_note() -> None:
    for model in ("anthropic:claude-sonnet-4-6", "anthropic:claude-haiku-4-5-20251001", "gemini:gemini-2.0-flash-lite"):
        info = model_info(as_ref(model))
        assert info is not None and not info.retired, model


def test_a_window_the_library_lacks_comes_from_a_window_only_price_file_entry(
        tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """genai-prices 0.2.3 has no window for Gemini 2.5 Pro (the run asks models.get); the
    user's entry of ``window`` alone gives one to plan with and keeps the library's prices."""
    from ctxprobe.core.catalog import context_window
    from ctxprobe.prices.listing import price_rows
    from ctxprobe.prices.table import load_prices

    model = "gemini:gemini-2.5-pro"
    assert model_info(as_ref(model)).window is None  # type: ignore[union-attr]
    f = tmp_path / "prices.yaml"
    f.write_text(f'{model}: {{window: 1048576, source: "the user, read 2026-12-04"}}\n')
    table = load_prices(f)
    assert context_window(as_ref(model), table) == 1_048_576
    assert price_for(model, table, prompt_tokens=300_000) == price_for(model, prompt_tokens=300_000)
    code = main(["plan", "--model", model, "--lengths", "100k", "--depths", "0.5", "--reps", "1",
                 "--max-tokens", "16", "--json", "--prices", str(f), "--tokenizer", "tiktoken:o200k_base"])
    plan = json.loads(capsys.readouterr().out)
    assert code == 0 and plan["window"] == {"tokens": 1_048_576, "source": "the user, read 2026-12-04"}
    assert plan["prices"]["library_model"] == "google/gemini-2.5-pro"
    assert plan["prices"]["on_demand"] == pytest.approx(_oracle(model, 102_400, 16), rel=0.01)
    rows = [r for r in price_rows(table) if r.model == model]
    assert len(rows) == 2 and {r.window for r in rows} == {1_048_576} and rows[0].library  # the library's tiers

    def built(*_: Any, **__: Any) -> None:
        raise AssertionError("a 2M-token case was built before the length was refused")

    monkeypatch.setattr("ctxprobe.haystack.packer._pack", built)  # refused before anything is built
    assert main(["plan", "--model", model, "--lengths", "2000k", "--prices", str(f)]) == 2
    assert "exceeds gemini:gemini-2.5-pro's window of 1,048,576 tokens" in capsys.readouterr().err
