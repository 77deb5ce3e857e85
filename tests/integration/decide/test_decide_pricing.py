"""decide's one price lookup: a price file prices any model, sims and local ones included."""

from __future__ import annotations

from ctxprobe.core.runmeta import RunMeta
from ctxprobe.decide.runs import advertised_window
from ctxprobe.prices.table import input_price, load_prices
from ctxprobe.spec.names import as_ref


def test_the_price_file_prices_any_model_and_nothing_else_is_free(tmp_path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text('"sim:decay?cliff=3000&width=1": {input: 1.0, output: 2.0}\n'
                    '"sim:perfect": {input: 10, output: 10}\n'
                    '"openai-compat:my-model-awq": {input: 0.2, output: 0.2}\n'
                    'local: {input: 0.05, output: 0.05}\n', encoding="utf-8")
    table = load_prices(path)
    assert input_price(as_ref("sim:decay?cliff=3000&width=1"), table) == 1.0  # the options pick the price
    assert input_price(as_ref("sim:decay?cliff=6000&width=1"), table) is None  # not in the file: unpriced, not free
    assert input_price(as_ref("sim:perfect"), table) == 10.0
    assert input_price(as_ref("local"), table) == 0.05
    assert input_price(as_ref("openai-compat:my-model-awq@http://127.0.0.1:8001/v1"), table) == 0.2
    assert input_price(as_ref("openai-compat:other@http://127.0.0.1:8001/v1"), table) is None  # unknown: no guess
    assert input_price(as_ref("openai:gpt-4o-mini"), table) == 0.15  # the built-ins stay


def test_advertised_window_from_what_the_run_knows() -> None:
    assert advertised_window(as_ref("x"), RunMeta.from_json({"preflight": {"context_window": 32768}})) == 32768
    assert advertised_window(as_ref("x"), RunMeta.from_json({"trained_context": 8192})) == 8192
    assert advertised_window(as_ref("sim:perfect?ctx=4096"), RunMeta.from_json({})) == 4096
    assert advertised_window(as_ref("openai:gpt-4o"), RunMeta.from_json({})) == 128_000  # the catalog's published window
    assert advertised_window(as_ref("openai-compat:mine@http://127.0.0.1:1/v1"), RunMeta.from_json({})) is None  # unknown: no guess


def test_decide_says_how_old_a_dated_price_file_is(tmp_path) -> None:
    """A model priced by a dated price file entry past the catalog's limit: its age is said
    once; the library's prices (as current as the installed genai-prices), an undated price
    file's and a free model's say nothing."""
    import datetime as dt

    from ctxprobe.core.catalog import STALE_DAYS
    from ctxprobe.prices.table import price_age_notes
    from ctxprobe.prices.table import prices_as_of

    assert prices_as_of("openai:gpt-4o-mini", load_prices(None)) is None  # the library's
    assert price_age_notes([as_ref("openai:gpt-4o-mini"), as_ref("sim:perfect")], load_prices(None)) == []
    old = (dt.date.today() - dt.timedelta(days=STALE_DAYS + 1)).isoformat()
    dated = tmp_path / "dated.yaml"
    dated.write_text(f"openai:gpt-4o-mini: {{input: 0.1, output: 0.4, as_of: '{old}'}}\n")
    notes = price_age_notes([as_ref("openai:gpt-4o-mini"), as_ref("openai:gpt-4o-mini"), as_ref("sim:perfect")], load_prices(dated))
    assert notes == [f"openai:gpt-4o-mini: prices read on {old} are {STALE_DAYS + 1} days old (over {STALE_DAYS}): "
                     "check the provider's page or give current ones in a price file (--prices FILE)"]
    priced = tmp_path / "prices.yaml"
    priced.write_text("openai:gpt-4o-mini: {input: 0.1, output: 0.4}\n")
    assert price_age_notes([as_ref("openai:gpt-4o-mini")], load_prices(priced)) == []  # the user's own price: undated


def test_an_at_sign_inside_a_path_is_part_of_the_name_not_a_server(tmp_path) -> None:
    """``llamacpp:/m/x@v2.gguf`` is the file ``/m/x@v2.gguf``: a price of ``llamacpp:/m/x``
    (another file) must not price it; a served model's price key drops only its ``@URL``."""
    path = tmp_path / "p.yaml"
    path.write_text('"llamacpp:/m/x": {input: 9.0, output: 9.0}\n'
                    '"llamacpp:/m/y@v2.gguf": {input: 3.0, output: 3.0}\n'
                    '"openai-compat:org/m@8bit": {input: 0.5, output: 0.5}\n', encoding="utf-8")
    table = load_prices(path)
    assert input_price(as_ref("llamacpp:/m/x@v2.gguf"), table) is None
    assert input_price(as_ref("llamacpp:/m/y@v2.gguf"), table) == 3.0
    assert input_price(as_ref("openai-compat:org/m@8bit@http://127.0.0.1:9/v1?x=1"), table) == 0.5
