"""A model provider declared once: :class:`ProviderDeclaration`.

Everything ctxprobe knows about a provider is named on one declaration: the factory that
builds it, its profile (:class:`ctxprobe.core.catalog.ProviderInfo`: default tokenizer,
prices, caching rules, batch API, windows), how its models are spelled, the check of a
name that needs no SDK, and the tokenizer schemes it brings (a counting API). Each part is
a ``"module:attr"`` path (or the object itself), imported only when it is used, so
declaring a provider imports neither its SDK nor its code.

ctxprobe's own providers are packages ``ctxprobe/providers/<name>/`` whose ``__init__.py``
holds ``PROVIDER = ProviderDeclaration(...)`` and nothing else; the parts are the files
beside it (``api.py``, ``profile.py``, ``options.py``, ``batch.py``, ``count.py``...,
docs/architecture.md). Every declaration is registered in the registry's ``providers``
group: ``registry.register("providers", PROVIDER.name, PROVIDER)`` (one line each in
:mod:`ctxprobe.core.builtins`, or a plugin's own call), or by an entry point
``[project.entry-points."ctxprobe.providers"] NAME = "pkg.module:PROVIDER"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ProviderDeclaration:
    """One provider and its parts, each a ``"module:attr"`` path or the object itself."""

    #: The provider's name: models are spelled ``NAME/MODEL`` or ``NAME:MODEL``.
    name: str
    #: ``factory(ref, *, tokenizer, n_ctx, options) -> Provider`` (:mod:`ctxprobe.models.base`).
    factory: str | object
    #: Its profile, a :class:`ctxprobe.core.catalog.ProviderInfo` (or its path); None: none.
    info: str | object | None = None
    #: The accepted form, for errors and ``--model``'s help (``anthropic:MODEL[?thinking=N]``).
    form: str | None = None
    #: ``check(ref)``: raises the provider's one-line error for a name it would refuse, without
    #: building it (no SDK, no key): ``plan`` refuses what ``run`` would.
    check: str | object | None = None
    #: Other spellings of the provider (``google`` for ``gemini``).
    aliases: tuple[str, ...] = ()
    #: ``{spelling: base-URL env vars}``: ``NAME@BASE_URL`` models (``vllm/NAME`` with ``$VLLM_BASE_URL``).
    served_as: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: With ``--base-url``: that provider instead (``openai`` → ``openai-compat``).
    url_fallback: str | None = None
    #: Spelled by its name alone (``local``).
    bare: bool = False
    #: Asks its server for its prefix-cache slots before a sweep (``plan`` says so).
    reports_slots: bool = False
    #: The OpenAI-compatible server of a simulated provider (``ctxprobe serve-sim``).
    serve: str | object | None = None
    #: Tokenizer schemes it brings, ``{scheme: factory(name, rest)}`` (its counting API,
    #: ``anthropic-count``), registered with it in the ``tokenizers`` group; each is accepted
    #: by its name alone too.
    tokenizers: Mapping[str, str | object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip():
            raise ValueError(f"bad provider name {self.name!r}")

    def meta(self) -> dict[str, Any]:
        """What the registry keeps beside the factory (the facts read without importing it)."""
        out: dict[str, Any] = {}
        for key in ("info", "form", "check", "url_fallback", "serve"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.aliases:
            out["aliases"] = tuple(self.aliases)
        if self.served_as:
            out["served_as"] = dict(self.served_as)
        if self.bare:
            out["bare"] = True
        if self.reports_slots:
            out["reports_slots"] = True
        return out
