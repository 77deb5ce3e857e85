"""ctxprobe's own providers, tokenizer schemes and families, registered through the same
:func:`ctxprobe.core.registry.register` a plugin uses. Targets are paths, imported only
when an entry is used (the SDK-backed providers import their SDK then)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxprobe.core.provider_declaration import ProviderDeclaration


def register_builtins(register: Callable[..., Any]) -> None:
    # providers: one declaration each (ctxprobe.core.provider_declaration), registered as a
    # plugin's is. A provider is a package ctxprobe/providers/<name>/ that declares itself
    # there, PROVIDER: its factory, profile (ctxprobe.core.catalog.ProviderInfo: default
    # tokenizer, remote counting, batch API, prices, caching rules, windows, name hints,
    # help), spellings, name check and the tokenizer schemes it brings (its counting API).
    from ctxprobe.providers import anthropic, gemini, hf, llamacpp, openai, openai_compat

    for provider in (
            # the simulated models (sim/), declared here: free, counted by the local tokenizer
            ProviderDeclaration("sim", "ctxprobe.sim.model:make_sim_provider", form="sim:KIND",
                                serve="ctxprobe.sim.server:serve_forever", info="ctxprobe.core.profiles.local:SIM",
                                check="ctxprobe.sim.model:check_sim"),
            ProviderDeclaration("sim-judge", "ctxprobe.sim.judge:make_sim_judge", form="sim-judge:KIND",
                                check="ctxprobe.sim.judge:check_sim_judge"),
            openai_compat.PROVIDER,
            llamacpp.PROVIDER,
            llamacpp.LOCAL,
            openai.PROVIDER,
            anthropic.PROVIDER,
            gemini.PROVIDER,
            hf.PROVIDER,
    ):
        register("providers", provider.name, provider)

    # tokenizer schemes (NAME:REST; bare: NAME alone is accepted too); a provider's counting
    # API is registered with its declaration
    t = "ctxprobe.tokenizers.schemes:"
    register("tokenizers", "local", t + "local", bare=True)
    register("tokenizers", "gguf", t + "gguf")
    register("tokenizers", "hf", t + "hf")
    register("tokenizers", "tiktoken", t + "tiktoken", bare=True)
    register("tokenizers", "endpoint", t + "endpoint", bare=True)
    register("tokenizers", "approx", t + "approx", bare=True)

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
    # accuracy by turns back (runs in a turns/tools layout only), after the reasoning budgets
    register("report_sections", "turns-back", "ctxprobe.report.html.turns_back:turns_back_section", order=75)
