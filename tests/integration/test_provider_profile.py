"""A provider's profile is all ctxprobe needs to know of it: a scratch provider, written as
docs/architecture.md shows it (one module, one registration) gets its default tokenizer,
prices (tiers by prompt length), window, batch API and name hints from its registration
alone, through the same look-ups the sweep, ``plan`` and ``prices`` use."""

from __future__ import annotations

from ctxprobe.spec.names import as_ref

import importlib
import re
import sys
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.core import registry
from ctxprobe.core.catalog import context_window, provider_info
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.batch import batch_api_for
from ctxprobe.plan.caching import cache_rules
from ctxprobe.prices.table import load_prices, price_for
from ctxprobe.spec.names import parse_model
from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"

BATCH = '''

class Batch:
    """The scratch provider's batch API (what ``--batch`` would send through)."""
    provider = "lastword"

    def __init__(self, provider):
        self.of = provider
'''


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """The doc's provider example as a module of its own, its batch API declared in it."""
    block = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)[0]
    assert 'register("providers", "lastword"' in block and "batch=None" in block
    code = block.replace('"lastword"', '"scratchword"').replace("batch=None", 'batch="scratch_word:Batch"')
    (tmp_path / "scratch_word.py").write_text(code + BATCH, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        yield importlib.import_module("scratch_word")
    finally:
        registry.unregister("providers", "scratchword")
        sys.modules.pop("scratch_word", None)


def test_a_scratch_provider_is_known_from_its_registration_alone(scratch: object) -> None:
    assert infer_tokenizer("scratchword/any") == "approx:4"
    base, long = price_for("scratchword:any"), price_for("scratchword:any", prompt_tokens=100_001)
    assert base is not None and long is not None and (base.input, long.input) == (1.0, 2.0)
    assert price_for("scratchword:any", prompt_tokens=100_000) == base  # "over 100,000": 100,000 is the base tier
    assert price_for("scratchword:other") is None  # an unpriced model of it is unknown, not free
    assert context_window(as_ref("scratchword:any")) == 200_000
    assert cache_rules("scratchword:any").mechanism == "none"
    provider = resolve_provider(parse_model("scratchword/any"), resolve_tokenizer("approx:4"))
    api = batch_api_for(provider)
    assert type(api).__name__ == "Batch" and api.of is provider  # type: ignore[attr-defined]
    assert "scratchword:any" in load_prices()
    assert provider_info("scratchword").models[0].source == "our price list"


def test_a_provider_without_a_batch_api_is_refused_in_one_line() -> None:
    with pytest.raises(CtxprobeError, match="sim:perfect has no batch API: --batch works with anthropic:, gemini:, "
                                            "openai: models"):
        batch_api_for(resolve_provider("sim:perfect", resolve_tokenizer("local")))


def test_plan_and_prices_read_the_scratch_profile(scratch: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", "scratchword/any", "--lengths", "1k", "--reps", "1", "--depths", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "$1 / $2 per 1M input / output tokens; over 100,000 prompt tokens $2 / $3" in " ".join(out.split())
    # past the declared window: refused in one line before anything is built
    assert main(["plan", "--model", "scratchword/any", "--lengths", "256k", "--reps", "1", "--depths", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "exceeds scratchword:any's window of 200,000 tokens" in " ".join(err.split())
    assert main(["prices"]) == 0
    assert "scratchword:any" in capsys.readouterr().out


def test_an_entry_point_factory_carries_its_profile() -> None:
    """An installed plugin's entry point names only its factory: the profile rides on it
    as ``provider_info`` (the older ``default_tokenizer`` attribute still works)."""
    from ctxprobe.core.catalog import ModelInfo, Price, ProviderInfo

    def factory(ref, **_):  # type: ignore[no-untyped-def]
        raise AssertionError("not called: the profile is read without making a provider")

    factory.provider_info = ProviderInfo(default_tokenizer="approx:3",  # type: ignore[attr-defined]
                                         models=(ModelInfo("m", (Price(0.5, 1.5),), window=1000),))

    def older(ref, **_):  # type: ignore[no-untyped-def]
        raise AssertionError("not called")

    older.default_tokenizer = "approx:2"  # type: ignore[attr-defined]
    registry.register("providers", "epfactory", factory, origin="some-dist")
    registry.register("providers", "epolder", older, origin="some-dist")
    try:
        assert infer_tokenizer("epfactory/m") == "approx:3" and infer_tokenizer("epolder/x") == "approx:2"
        assert price_for("epfactory:m") == Price(0.5, 1.5) and context_window(as_ref("epfactory:m")) == 1000
    finally:
        registry.unregister("providers", "epfactory")
        registry.unregister("providers", "epolder")


def test_every_model_the_anthropic_sdk_calls_deprecated_is_marked_so() -> None:
    """The SDK warns at every call to a model in its own ``DEPRECATED_MODELS`` (model →
    end-of-life date); a model of that list that our table prices must be marked
    deprecated or retired there too, so `plan` says it before anything is sent."""
    pytest.importorskip("anthropic")
    from anthropic._data import DEPRECATED_MODELS

    from ctxprobe.core.catalog import check_model, model_info

    known = [m for m in DEPRECATED_MODELS if model_info(as_ref(f"anthropic:{m}")) is not None]
    assert "claude-opus-4-5" in known or "claude-opus-4-5" not in DEPRECATED_MODELS
    for name in known:
        info = model_info(as_ref(f"anthropic:{name}"))
        assert info is not None and (info.deprecated or info.retired), name
        if not info.retired:
            note = check_model(as_ref(f"anthropic:{name}"))
            assert note is not None and "deprecated" in note, name
