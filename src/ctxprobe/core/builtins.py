"""ctxprobe's own providers, tokenizer schemes and families, registered through the same
:func:`ctxprobe.core.registry.register` a plugin uses. Targets are paths, imported only
when an entry is used (the SDK-backed providers import their SDK then)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any



def register_builtins(register: Callable[..., Any]) -> None:
    p = "ctxprobe.models.factories:"
    # providers. meta: aliases (ALIAS/MODEL spellings), served_as ({spelling: base-URL env
    # vars}: NAME@BASE_URL models), url_fallback (with --base-url: that provider instead),
    # bare (spelled by its name alone), form (the accepted form, for errors), reports_slots
    # (asks its server for its prefix-cache slots before a sweep: ``plan`` says so), serve
    # (the simulator's OpenAI-compatible server, for ``ctxprobe serve-sim``), check (a function
    # of the ModelRef raising the provider's one-line error for a bad name, without building it)
    # info: the provider's profile (ctxprobe.core.catalog.ProviderInfo): default tokenizer,
    # remote counting, batch API, prices, caching rules, windows, name hints, help
    i = "ctxprobe.core.profiles."
    register("providers", "sim", "ctxprobe.sim.model:make_sim_provider", form="sim:KIND",
             serve="ctxprobe.sim.server:serve_forever", info=i + "local:SIM", check="ctxprobe.sim.model:check_sim")
    register("providers", "sim-judge", "ctxprobe.sim.judge:make_sim_judge", form="sim-judge:KIND",
             check="ctxprobe.sim.judge:check_sim_judge")
    register("providers", "openai-compat", p + "make_openai_compat", form="openai-compat:NAME@BASE_URL",
             reports_slots=True, info=i + "local:OPENAI_COMPAT",
             served_as={"openai-compat": ("OPENAI_BASE_URL",), "openai-api": ("OPENAI_BASE_URL",),
                        "vllm": ("VLLM_BASE_URL", "OPENAI_BASE_URL"),
                        "sglang": ("SGLANG_BASE_URL", "OPENAI_BASE_URL")})
    register("providers", "llamacpp", p + "make_llamacpp", form="llamacpp:/path/model.gguf", info=i + "local:LLAMACPP")
    register("providers", "local", p + "make_llamacpp", bare=True, form="local (embedded SmolLM2-135M-Instruct)",
             info=i + "local:LOCAL")
    register("providers", "openai", p + "make_openai", url_fallback="openai-compat",
             form="openai:MODEL[?reasoning_effort=low&thinking=N]", info=i + "openai:INFO",
             check="ctxprobe.models.options:check_openai")
    register("providers", "anthropic", p + "make_anthropic", form="anthropic:MODEL[?thinking=N]",
             info=i + "anthropic:INFO",
             check="ctxprobe.models.options:check_anthropic")
    register("providers", "gemini", p + "make_gemini", aliases=("google",), form="gemini:MODEL[?thinking=N]",
             info=i + "gemini:INFO",
             check="ctxprobe.models.options:check_gemini")
    register("providers", "hf", p + "make_hf", form="hf:/path/to/model-folder[?dtype=float32&thinking=N]",
             info=i + "local:HF")

    # tokenizer schemes (NAME:REST; bare: NAME alone is accepted too)
    t = "ctxprobe.tokenizers.schemes:"
    register("tokenizers", "local", t + "local", bare=True)
    register("tokenizers", "gguf", t + "gguf")
    register("tokenizers", "hf", t + "hf")
    register("tokenizers", "tiktoken", t + "tiktoken", bare=True)
    register("tokenizers", "endpoint", t + "endpoint", bare=True)
    register("tokenizers", "approx", t + "approx", bare=True)
    register("tokenizers", "anthropic-count", t + "anthropic_count", bare=True)
    register("tokenizers", "gemini-count", t + "gemini_count", bare=True)

    # task families: one declaration each (ctxprobe.core.declaration), registered as a plugin's
    # is; each family's package (ctxprobe/families/<name>/) declares itself there, FAMILY.
    from ctxprobe.families import (aggregation, documents, graphwalks, instructions, longout, mrcr, multihop, niah,
                                   nolima, phonebook, ruler, updates, vartrack)

    for declared in (niah.FAMILY, multihop.FAMILY, documents.FAMILY, phonebook.FAMILY, vartrack.FAMILY,
                     aggregation.FAMILY, ruler.FAMILY, mrcr.FAMILY, graphwalks.FAMILY, nolima.FAMILY,
                     updates.FAMILY, longout.FAMILY, instructions.FAMILY):
        register("families", declared.name, declared)

    # report sections (after the page's own, in name order)
    register("report_sections", "decide", "ctxprobe.decide.html:report_section")
    register("report_sections", "synthetic-vs-natural", "ctxprobe.report.html.natural:natural_section")

    # the HTML report's own sections, in page order (plugins' sections come at order 500, by name)
    h = "ctxprobe.report.html.builtin:"
    for order, (name, attr) in enumerate((
            ("summary", "summary_section"), ("runs", "runs_section"), ("profile", "profile"),
            ("all-families", "all_families_section"), ("families", "families"), ("family-sections", "family_sections"),
            ("headlines", "headlines"), ("reasoning-budgets", "budgets"), ("token-audit", "audit"),
            ("cost-latency", "cost_latency"), ("failures", "failures"))):
        register("report_sections", name, h + attr, order=order * 10 + (600 if order >= 8 else 0))
