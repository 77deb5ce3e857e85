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
    # (asks its server for its prefix-cache slots before a sweep: ``plan`` says so)
    register("providers", "sim", p + "make_sim_provider", form="sim:KIND")
    register("providers", "openai-compat", p + "make_openai_compat", form="openai-compat:NAME@BASE_URL",
             reports_slots=True,
             served_as={"openai-compat": ("OPENAI_BASE_URL",), "openai-api": ("OPENAI_BASE_URL",),
                        "vllm": ("VLLM_BASE_URL", "OPENAI_BASE_URL"),
                        "sglang": ("SGLANG_BASE_URL", "OPENAI_BASE_URL")})
    register("providers", "llamacpp", p + "make_llamacpp", form="llamacpp:/path/model.gguf")
    register("providers", "local", p + "make_llamacpp", bare=True, form="local (embedded SmolLM2-135M-Instruct)")
    register("providers", "openai", p + "make_openai", url_fallback="openai-compat",
             form="openai:MODEL[?reasoning_effort=low&thinking=N]")
    register("providers", "anthropic", p + "make_anthropic", form="anthropic:MODEL[?thinking=N]")
    register("providers", "gemini", p + "make_gemini", aliases=("google",), form="gemini:MODEL[?thinking=N]")
    register("providers", "hf", p + "make_hf", form="hf:/path/to/model-folder[?dtype=float32&thinking=N]")

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

    # task families
    for name, target in (("niah", "niah:Niah"), ("multihop", "multihop:Multihop"), ("documents", "documents:Documents"),
                         ("phonebook", "phonebook:Phonebook"), ("vartrack", "vartrack:Vartrack"),
                         ("aggregation", "aggregation:Aggregation"), ("ruler", "ruler.family:Ruler"),
                         ("mrcr", "mrcr:Mrcr"), ("graphwalks", "graphwalks:Graphwalks"),
                         ("nolima", "nolima:Nolima")):
        register("families", name, "ctxprobe.tasks." + target)

    # presets (named sets of families), each beside its family
    register("presets", "ruler", "ctxprobe.tasks.ruler.preset:RULER_PRESET")

    # report sections beyond the page's own
    register("report_sections", "synthetic-vs-natural", "ctxprobe.report.html_natural:natural_section")
