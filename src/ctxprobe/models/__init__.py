"""Models behind one thin protocol: ``provider:name`` spec strings → :class:`Provider`.

Built-in providers are resolved here; optional heavy ones are imported lazily inside
:func:`resolve_provider` so ``import ctxprobe.models`` stays cheap.
"""

from __future__ import annotations

from ctxprobe.cases.memory import IdsPolicy
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import canonical_model
from ctxprobe.models.base import (
    GenerateRequest,
    GenerateResult,
    PermanentError,
    Provider,
    TransientError,
)
from ctxprobe.models.openai_compat import OpenAICompatProvider, parse_model_spec
from ctxprobe.models.sim import SIM_KINDS, SimModel, make_sim, view_prompt
from ctxprobe.models.skills.reader import Reader
from ctxprobe.models.sim_server import SimServer, serve_forever
from ctxprobe.tokenizers.base import Tokenizer

#: Accepted model spec forms, shown in the error for an unknown one.
ACCEPTED_FORMS: tuple[str, ...] = (
    "sim:KIND (" + ", ".join(SIM_KINDS) + ")",
    "openai-compat:NAME@BASE_URL",
    "openai-api/NAME, vllm/NAME or sglang/NAME with --base-url or OPENAI_BASE_URL",
    "openai/MODEL, anthropic/MODEL, gemini/MODEL (= openai:MODEL, ...)",
    "local (embedded SmolLM2-135M-Instruct)",
    "llamacpp:/path/model.gguf",
    "openai:MODEL[?reasoning_effort=low&thinking=N]",
    "anthropic:MODEL[?thinking=N]",
    "gemini:MODEL[?thinking=N]",
    "hf:/path/to/model-folder[?dtype=float32&thinking=N]",
)


def resolve_provider(model: str, tokenizer: Tokenizer, n_ctx: int | None = None,
                     options: dict[str, object] | None = None) -> Provider:
    """Build the provider a model spec names, or raise a one-line :class:`CtxprobeError`.

    ``tokenizer`` is the spec's tokenizer: simulated and in-process models count and read
    with it; remote servers tokenize on their side and ignore it. ``options`` are
    provider options from a spec file; ``?name=value`` options in ``model`` override them
    (see :mod:`ctxprobe.models.options`). SDK-backed providers import their SDK here, so
    a missing extra or API key fails before anything is planned or sent.
    """
    spec = canonical_model(model)
    for prefix, module, cls in _SDK_PROVIDERS:
        if spec.startswith(prefix):
            import importlib

            provider_cls = getattr(importlib.import_module(f"ctxprobe.models.{module}"), cls)
            return provider_cls.from_spec(spec, dict(options or {}))
    if spec.startswith("sim:"):
        return make_sim(spec, tokenizer)
    if spec.startswith("openai-compat:"):
        return OpenAICompatProvider.from_spec(spec)
    if spec == "local" or spec.startswith("llamacpp:"):
        return _llamacpp(spec, tokenizer, n_ctx)
    raise CtxprobeError(f"unknown model '{model}': accepted forms are {'; '.join(ACCEPTED_FORMS)}")


def check_model_form(model: str) -> None:
    """A one-line error (with a "did you mean") for a model name no provider accepts."""
    canonical_model(model)


#: (spec prefix, module under ctxprobe.models, class): imported only when used.
_SDK_PROVIDERS: tuple[tuple[str, str, str], ...] = (
    ("openai:", "openai_api", "OpenAIProvider"),
    ("anthropic:", "anthropic_api", "AnthropicProvider"),
    ("gemini:", "gemini_api", "GeminiProvider"),
    ("hf:", "hf_local", "HFLocalProvider"),
)


def _llamacpp(spec: str, tokenizer: Tokenizer, n_ctx: int | None) -> Provider:
    """``local`` = the embedded GGUF; ``llamacpp:/path.gguf`` = any GGUF, run in process."""
    from pathlib import Path

    from ctxprobe.embedded import embedded_model_path
    from ctxprobe.models.llamacpp import DEFAULT_N_CTX, LlamaCppProvider

    if spec == "local":
        path = embedded_model_path()
    else:
        path = Path(spec.split(":", 1)[1]).expanduser()
        if not path.is_file():
            raise CtxprobeError(f"no GGUF file at {path}: give llamacpp:/path/to/model.gguf")
    from ctxprobe.embedded.gguf_meta import gguf_trained_context

    # The trained window (GGUF metadata) is the default runtime window: positions past it
    # were never trained, so lengths beyond it need --allow-beyond-window (which passes n_ctx).
    trained = gguf_trained_context(path)
    return LlamaCppProvider(spec, path, tokenizer, n_ctx=n_ctx or trained or DEFAULT_N_CTX, trained_context=trained)


def ids_policy(provider: object) -> IdsPolicy:
    """What a provider needs of ``prompt_ids`` (how :func:`ctxprobe.cases.memory.slim_case` keeps
    them): remote ones nothing, llama.cpp a real list."""
    if isinstance(provider, OpenAICompatProvider):
        return "drop"
    module = type(provider).__module__
    if module.endswith((".openai_api", ".anthropic_api", ".gemini_api")):
        return "drop"
    if module.endswith(".llamacpp"):
        return "keep"  # the prompt goes to llama.cpp's server as a JSON list of ints
    return "compact"  # sims read len(); hf_local copies with list()


__all__ = [
    "ACCEPTED_FORMS",
    "GenerateRequest",
    "GenerateResult",
    "OpenAICompatProvider",
    "PermanentError",
    "Provider",
    "Reader",
    "SimModel",
    "SimServer",
    "TransientError",
    "ids_policy",
    "make_sim",
    "parse_model_spec",
    "resolve_provider",
    "serve_forever",
    "view_prompt",
]
