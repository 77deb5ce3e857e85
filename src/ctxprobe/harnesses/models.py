"""A harness's model names as ctxprobe's, to infer the tokenizer the cases are built for.

inspect_ai names a model ``PROVIDER/NAME`` with its own providers; the ones ctxprobe can
count for map to ctxprobe's model forms, and the tokenizer is then inferred exactly as
``ctxprobe run`` infers it (``ctxprobe.tokenizers.infer_tokenizer``): an OpenAI-compatible
server counts with its own ``/tokenize``, OpenAI models with tiktoken, and so on. Any
other model (``mockllm/model``, a hub id) needs the tokenizer named.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxprobe.errors import CtxprobeError

#: inspect_ai providers that speak to an OpenAI-compatible server at a base URL.
_SERVED = ("openai-api", "vllm", "sglang")
#: inspect_ai provider -> ctxprobe provider, for the hosted APIs.
_HOSTED = {"openai": "openai", "anthropic": "anthropic", "google": "gemini"}
TOKENIZER_FORMS = "local, gguf:/path.gguf, hf:/dir, tiktoken:o200k_base, endpoint:URL, approx"


@dataclass(frozen=True)
class HarnessModel:
    """A harness's model: its own name, ctxprobe's form of it (None when there is none)."""

    name: str
    ctxprobe: str | None


def inspect_model(name: str, base_url: str | None = None) -> HarnessModel:
    """``openai-api/SERVICE/NAME`` (base URL from ``SERVICE_BASE_URL``), ``vllm/NAME``,
    ``sglang/NAME`` → ``openai-compat:NAME@BASE_URL``; ``openai/``, ``anthropic/``,
    ``google/`` → ctxprobe's own; anything else → no ctxprobe form."""
    provider, _, rest = name.partition("/")
    if provider in _SERVED and rest and base_url:
        served = rest.split("/", 1)[1] if provider == "openai-api" and "/" in rest else rest
        return HarnessModel(name, f"openai-compat:{served}@{base_url.rstrip('/')}")
    if provider in _HOSTED and rest and not base_url:
        return HarnessModel(name, f"{_HOSTED[provider]}:{rest}")
    return HarnessModel(name, None)


def tokenizer_for(model: HarnessModel, named: str | None = None, *, flag: str = "-T tokenizer=NAME") -> str:
    """The tokenizer named, else the one ``ctxprobe run`` infers for the model."""
    if named:
        return str(named)
    if model.ctxprobe is None:
        raise CtxprobeError(f"cannot infer a tokenizer for model '{model.name}': pass {flag} "
                            f"({TOKENIZER_FORMS})")
    from ctxprobe.tokenizers import infer_tokenizer

    return infer_tokenizer(model.ctxprobe)


def spec_model(model: HarnessModel) -> str:
    """The model a harness run's spec names: ctxprobe's form, else ``local`` (the run's
    own model name is kept with the run, ``meta["harness_model"]``)."""
    return model.ctxprobe or "local"
