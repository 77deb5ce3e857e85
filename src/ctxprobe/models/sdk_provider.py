"""What the three SDK-backed providers (``openai:``, ``anthropic:``, ``gemini:``) share:
the key from the environment, the endpoint from the ``base_url`` option or an
environment variable, one client per event loop, and being made from a parsed
:class:`~ctxprobe.spec.names.ModelRef`.

A subclass names its SDK, options model, variables and default host as class
attributes and builds its client in :meth:`SDKProvider._make_client`; everything
else about a request stays in its own module.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, ClassVar, TypeVar

from ctxprobe.errors import CtxprobeError
from ctxprobe.models._sdk import api_key_from_env, import_sdk
from ctxprobe.models.base import IdsPolicy, ProviderBase
from ctxprobe.models.caching import PrefixGate
from ctxprobe.models.options import ProviderOptions, parse_options
from ctxprobe.spec.names import ModelRef

_P = TypeVar("_P", bound="SDKProvider")


class SDKProvider(ProviderBase):
    """One hosted API through its official SDK (one client per event loop)."""

    #: The registry name the model is written with (``openai`` in ``openai:gpt-4o``).
    provider: ClassVar[str]
    #: (module, PyPI package, extra) of the SDK, imported when the provider is made.
    sdk: ClassVar[tuple[str, str, str]]
    options_model: ClassVar[type[ProviderOptions]]
    api_key_env: ClassVar[tuple[str, ...]]
    base_url_env: ClassVar[str]
    #: Named in errors when no other endpoint is set.
    default_host: ClassVar[str]
    #: An example model, for the error a spec without a model name gets.
    example: ClassVar[str]

    #: What it needs of a case's prompt ids (:func:`ctxprobe.models.ids_policy`): none,
    #: the server tokenizes.
    ids_policy: IdsPolicy = "drop"
    max_concurrency: int | None = None

    def __init__(self, model: str, options: ProviderOptions, *, name: str | None = None,
                 context_window: int | None = None) -> None:
        module, package, extra = self.sdk
        self._sdk = import_sdk(module, package, extra, f"The model '{self.provider}:{model}'")
        self.model = model
        self.options: Any = options
        self.name = name or f"{self.provider}:{model}"
        self.context_window = context_window
        self._api_key = api_key_from_env(self.api_key_env, f"{self.provider}:{model}")
        self.base_url = options.base_url or os.environ.get(self.base_url_env, "").strip() or None
        self._where = self.base_url or self.default_host
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        #: A group's first request answers before the rest read its cached prefix.
        self._gate = PrefixGate()

    @classmethod
    def from_ref(cls: type[_P], ref: ModelRef, options: dict[str, Any] | None = None) -> _P:
        """The provider of a parsed model reference; ``options`` (a spec file's mapping) are
        overridden by the reference's own ``?k=v`` options."""
        if not ref.name:
            raise CtxprobeError(f"bad model spec '{ref.raw or ref.spec}': expected {cls.provider}:MODEL, "
                                f"e.g. {cls.provider}:{cls.example}")
        parsed = parse_options(cls.options_model, ref.spec, ref.options, options)
        return cls(ref.name, parsed, name=ref.spec)

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.name!r})"

    def _make_client(self) -> Any:
        """A new SDK client (called once per event loop)."""
        raise NotImplementedError

    def _client_for_loop(self) -> Any:
        """The client for the running loop: an async HTTP pool cannot outlive its loop."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = self._make_client()
            self._client_loop = loop
        return self._client
