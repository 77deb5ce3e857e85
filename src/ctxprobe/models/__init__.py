"""Models behind one thin protocol: ``provider:name`` spec strings → :class:`Provider`.

Providers are found in the registry (:mod:`ctxprobe.core.registry`, group ``providers``;
ctxprobe's own are one folder each, :mod:`ctxprobe.providers`); optional heavy ones are
imported only when resolved, so ``import ctxprobe.models`` stays cheap. This package is
what the providers share: the protocol (:mod:`.base`), SDK helpers, option parsing, the
prompt-cache gate, the batch API's base and reasoning text handling.
"""

from __future__ import annotations

from ctxprobe.core import registry
from ctxprobe.core.case import IdsPolicy
from ctxprobe.core.loader import resolve
from ctxprobe.spec.names import ModelRef, parse_model
from ctxprobe.models.base import (
    GenerateRequest,
    GenerateResult,
    PermanentError,
    Provider,
    ProviderBase,
    TransientError,
    with_provider_defaults,
)
from ctxprobe.tokenizers.base import Tokenizer

def resolve_provider(model: str | ModelRef, tokenizer: Tokenizer | None, n_ctx: int | None = None,
                     options: dict[str, object] | None = None) -> Provider:
    """Build the provider a model reference names, or raise a one-line :class:`CtxprobeError`.

    ``tokenizer`` is the spec's tokenizer: simulated and in-process models count and read
    with it; remote servers tokenize on their side and ignore it. ``options`` are
    provider options from a spec file; ``?name=value`` options in ``model`` override them
    (see :mod:`ctxprobe.models.options`). The provider comes from the registry (a
    plugin's as a built-in's); SDK-backed ones import their SDK here, so a missing extra
    or API key fails before anything is planned or sent.
    """
    ref = model if isinstance(model, ModelRef) else parse_model(model)
    factory = registry.load("providers", ref.provider, what="model provider")
    # a plugin's provider that does not inherit ProviderBase gets the optional members' defaults here
    provider: Provider = with_provider_defaults(factory(ref, tokenizer=tokenizer, n_ctx=n_ctx,
                                                        options=dict(options or {})))
    return provider


def check_model_form(model: str) -> None:
    """A one-line error (with a "did you mean") for a model name no provider accepts."""
    parse_model(model)


def check_model_name(model: str | ModelRef) -> ModelRef:
    """The one-line error a provider would raise for this name, found without building it
    (no SDK imported, no key read, no model loaded): the form, then the provider's own
    ``check`` of the name where its registration names one (the sims' kinds and parameters).
    Commands that print a plan call it first, so a mistyped model is the first line."""
    ref = model if isinstance(model, ModelRef) else parse_model(model)
    entry = registry.get("providers", ref.provider, what="model provider")
    check = entry.meta.get("check")
    if check is not None:
        resolve(check, what=f"provider '{entry.name}' ({entry.origin}): its name check")(ref)
    return ref


def ids_policy(provider: Provider) -> IdsPolicy:
    """What a provider needs of ``prompt_ids`` (how :func:`ctxprobe.cases.memory.slim_case` keeps
    them): its declared ``ids_policy`` (remote ones ``"drop"``, llama.cpp ``"keep"``), by
    default ``"compact"`` (sims read len(); hf_local copies with list())."""
    policy = provider.ids_policy
    return "drop" if policy == "drop" else "keep" if policy == "keep" else "compact"


__all__ = [
    "ModelRef",
    "GenerateRequest",
    "GenerateResult",
    "PermanentError",
    "Provider",
    "ProviderBase",
    "TransientError",
    "ids_policy",
    "resolve_provider",
]
