"""The batch API of a resolved provider (``ctxprobe run --batch``); see :mod:`.batch_base`."""

from __future__ import annotations

from ctxprobe.core import registry
from ctxprobe.core.catalog import provider_info
from ctxprobe.core.loader import resolve
from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import Provider
from ctxprobe.models.batch_base import BatchAPI


def batch_api_for(provider: Provider, model: str | None = None) -> BatchAPI:
    """The batch API the provider of ``model`` (default: the provider's own name,
    ``provider:name``) declares (:attr:`ctxprobe.core.catalog.ProviderInfo.batch`), made
    with ``provider``; or a one-line error naming the providers that have one."""
    name = (model or provider.name).partition(":")[0]
    target = provider_info(name).batch
    if target is None:
        have = [e.name + ":" for e in registry.entries("providers") if provider_info(e.name).batch]
        raise CtxprobeError(f"{provider.name} has no batch API: --batch works with {', '.join(have)} models; "
                            "drop --batch")
    api: BatchAPI = resolve(target, what=f"provider '{name}': its batch API")(provider)
    return api
