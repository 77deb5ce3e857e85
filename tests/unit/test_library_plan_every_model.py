"""The plan's prices for every model genai-prices knows, not a hand-picked few.

Issue 41's "Done when": the plan prices 4 prompts of 100K and 4 of 300K tokens (16 output
tokens each) at what ``genai_prices.calc_price`` gives for the same requests, within 1%,
for models the issue does not name too. ``test_library_prices.py`` runs ``plan --json``
end to end on a dozen models; here every served model of each provider's library goes
through the same pricing the plan prints (:func:`ctxprobe.sweep.pricing.price_plan` and
its ``plan_json``), each priced on its own, the grid's cases built once (one tokenizer:
the prompts are the same for every model, only the prices differ), and the window check
the plan runs before pricing (:func:`ctxprobe.sweep.plan_report.window_refusal`). The
oracle is the library's own ``calc_price``; nothing here restates a price by hand."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from ctxprobe.cases.builder import BuildSettings, CaseBuilder
from ctxprobe.cases.families import build_families
from ctxprobe.core.catalog import model_info, provider_info
from ctxprobe.prices.library import BATCH, library_models
from ctxprobe.spec.names import as_ref
from ctxprobe.spec.schema import make_spec
from ctxprobe.sweep.plan_report import window_refusal
from ctxprobe.sweep.pricing import price_plan
from ctxprobe.haystack.context import BuildContext
from ctxprobe.tokenizers import resolve_tokenizer

TOKENIZER = "tiktoken:o200k_base"
K100, K300 = 100 * 1024, 300 * 1024


def _spec(model: str, lengths: str) -> Any:
    return make_spec({"model": model, "lengths": lengths, "depths": [0.5], "reps": 4, "tokenizer": TOKENIZER,
                      "decoding": {"max_tokens": 16}})


@pytest.fixture(scope="module")
def build() -> Any:
    """One tokenizer, one builder, each case built once for every model's plan."""
    template = _spec("openai:gpt-5.5", "100k,300k")
    tok = resolve_tokenizer(TOKENIZER, model=template.model)
    families = build_families(template, BuildContext(tokenizer=tok, haystack=template.haystack,
                                                     layout=template.layout))
    builder = CaseBuilder(BuildSettings.of(template, TOKENIZER), families)
    return tok, builder, functools.lru_cache(maxsize=None)(builder.build)


def _served(provider: str) -> list[Any]:
    """The library's models a ctxprobe provider plans (its own names; retired ones left out)."""
    info = provider_info(provider)
    out = []
    for found in library_models(info.price_library):
        if info.bare_hints and not found.name.startswith(info.bare_hints):
            continue  # Vertex's Claude under google: another provider's
        known = model_info(as_ref(f"{provider}:{found.name}"))
        if known is not None and not known.retired:
            out.append(found)
    return out


def _oracle(library: str, name: str, prompt: int, *, batch: bool = False) -> float:
    got = calc_price(Usage(input_tokens=prompt, output_tokens=16), name, provider_id=library,
                     price_context=BATCH if batch else None)
    return float(got.input_price + got.output_price)


@pytest.mark.parametrize("provider", ["anthropic", "gemini", "openai"])
def test_every_served_library_model_is_planned_at_calc_prices(provider: str, build: Any) -> None:
    tok, builder, built = build
    library = provider_info(provider).price_library
    models = _served(provider)
    assert len(models) >= 15, [m.name for m in models]
    priced = tiered = refused = batched = 0
    for found in models:
        model = f"{provider}:{found.name}"
        window = model_info(as_ref(model)).window  # type: ignore[union-attr]
        # the window check runs before anything is priced: 300K past a known window is refused
        beyond = window is not None and window < K300 + 16
        why = window_refusal(_spec(model, "100k,300k"), None)
        assert (why is not None) is beyond, (model, window, why)
        if beyond:
            assert why is not None and f"exceeds {model}'s window of {window:,} tokens" in why
            refused += 1
        if window is not None and window < K100 + 16:
            continue  # a TTS or live model's few thousand tokens: nothing of 100K to price
        lengths = "100k" if beyond else "100k,300k"
        plan = price_plan(_spec(model, lengths), tokenizer=tok, tokenizer_name=TOKENIZER, builder=builder,
                          build=built).plan_json()
        asked = [K100] * 4 + ([] if beyond else [K300] * 4)
        sizes = plan["by_prompt_size"]
        assert sorted(s["prompt_tokens"] for s in sizes for _ in range(s["requests"])) == asked, model
        assert plan["output_tokens"] == 16 * len(asked) and plan["library_model"] == found.library_id
        want = sum(_oracle(library, found.name, n) for n in asked)
        assert plan["on_demand"] == pytest.approx(want, rel=0.01), (model, plan["on_demand"], want)
        if "batch_tier" in found.tiers[0]:
            want = sum(_oracle(library, found.name, n, batch=True) for n in asked)
            assert plan["batch"] == pytest.approx(want, rel=0.01), (model, plan["batch"], want)
            assert plan["batch_basis"] == "library"
            batched += 1
        else:  # no batch variant in the library: the provider's discount, labelled as ctxprobe's estimate
            assert plan["batch_basis"] == "estimate" and plan["batch"] == pytest.approx(plan["on_demand"] / 2), model
        starts = [t["above"] for t in found.tiers if 0 < t["above"] < K300]
        if not beyond and starts:
            tiered += 1  # some request is billed at a long-context tier
            if min(starts) >= K100:  # the 300K prompts only: over 3x the 100K ones' price
                assert _oracle(library, found.name, K300) > 3 * _oracle(library, found.name, K100), model
        priced += 1
    assert priced >= 15 and batched >= 5
    # the tiered models over 300K prompts: Gemini Pro's >200K, GPT-5.4+'s >272K, Haiku 5.5's >100K
    assert tiered >= 1
    if provider == "anthropic":
        assert refused >= 1  # Sonnet 4.5, Haiku 4.5, Opus 4.5: 200K
