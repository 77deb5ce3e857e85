"""Model names as people already type them, mapped onto ctxprobe's ``provider:name`` specs.

Accepted beside the native ``provider:name`` forms of the registered providers:

- ``openai/gpt-4o`` → ``openai:gpt-4o``; ``anthropic/…`` → ``anthropic:…``; ``gemini/…``
  and ``google/…`` → ``gemini:…``; ``hf/PATH`` → ``hf:PATH``; ``sim/KIND`` → ``sim:KIND``
  (the inspect / litellm ``provider/model`` form);
- ``openai-api/NAME``, ``vllm/NAME``, ``sglang/NAME`` and ``openai-compat/NAME`` → an
  OpenAI-compatible server: ``openai-compat:NAME@BASE_URL`` with the URL from ``base_url``
  (``--base-url``), else ``OPENAI_BASE_URL`` (``VLLM_BASE_URL`` / ``SGLANG_BASE_URL`` first
  for those two); ``openai/NAME`` with an explicit ``--base-url`` goes there too.

Every spelling is parsed once, by :func:`parse_model`, into a :class:`ModelRef`; its
:attr:`ModelRef.spec` is the canonical string a run's identity is built from. Which
providers exist, and how each is spelled, comes from the registry (group ``providers``,
:mod:`ctxprobe.core.registry`), so a plugin's provider is named like a built-in one.
Near misses get a "did you mean". Pure string work: no provider is imported here, so
:mod:`ctxprobe.spec` can canonicalise the model while it validates.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import parse_qsl, urlsplit

from ctxprobe.core import registry
from ctxprobe.core.catalog import provider_info
from ctxprobe.errors import CtxprobeError

_URL = re.compile(r"^https?://\S+$")
_SERVED = re.compile(r"^(?P<name>[^\s]+?)@(?P<url>https?://\S+)$")
_SERVED_HINT = "expected openai-compat:NAME@BASE_URL, e.g. openai-compat:qwen2.5@http://127.0.0.1:8000/v1"


@dataclass(frozen=True)
class ModelRef:
    """A model reference, parsed once: which provider, which model, where it is served.

    ``provider`` is a registry name (``sim``, ``openai-compat``, ``local``, a plugin's
    name); ``name`` the model as that provider knows it, options (``?k=v``) stripped;
    ``base_url`` set for served models (``NAME@BASE_URL``); ``query`` the options as
    typed; ``raw`` what the user wrote."""

    provider: str
    name: str
    base_url: str | None = None
    query: str = ""
    raw: str = field(default="", compare=False)
    #: Spelled by the provider's name alone (``local``).
    bare: bool = False

    @property
    def options(self) -> dict[str, str]:
        return dict(parse_qsl(self.query, keep_blank_values=True))

    @property
    def spec(self) -> str:
        """The canonical string (what run ids are made from); parses back to this ref."""
        if self.bare:
            return self.provider
        model = self.name + (f"?{self.query}" if self.query else "")
        return f"{self.provider}:{model}" + (f"@{self.base_url}" if self.base_url else "")

    @property
    def identity(self) -> str:
        """What a run's identity keeps: the spec without where a server model is served."""
        if self.base_url is None:
            return self.spec
        return f"{self.provider}:{self.name}"


def _spellings() -> tuple[dict[str, str], dict[str, tuple[str, str, tuple[str, ...]]], set[str]]:
    """(``ALIAS/`` → provider, served spelling → (provider, spelling, URL env vars), bare names)."""
    slash: dict[str, str] = {}
    served: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    bare: set[str] = set()
    for entry in registry.entries("providers"):
        if entry.meta.get("bare"):
            bare.add(entry.name)
            continue
        slash[entry.name] = entry.name
        for alias in entry.meta.get("aliases", ()):
            slash[alias] = entry.name
        for spelling, envs in dict(entry.meta.get("served_as", {})).items():
            served[spelling] = (entry.name, spelling, tuple(envs))
    return slash, served, bare


def _base_url(envs: tuple[str, ...], base_url: str | None) -> str | None:
    if base_url:
        return base_url.strip().rstrip("/")
    for var in envs:
        value = os.environ.get(var, "").strip()
        if value:
            return value.rstrip("/")
    return None


def _check_url(url: str, where: str) -> str:
    if not _URL.match(url):
        raise CtxprobeError(f"base URL '{url}' ({where}) must start with http:// or https://, "
                            "e.g. http://127.0.0.1:8000/v1")
    return url


def served_ref(model: str, provider: str, body: str) -> ModelRef:
    """``body`` = ``NAME@BASE_URL`` of a served model (trailing ``/`` dropped); no credentials in the URL."""
    match = _SERVED.match(body)
    if not match:
        raise CtxprobeError(f"bad model spec '{model}': {_SERVED_HINT}")
    name, url = match.group("name"), match.group("url").rstrip("/")
    parts = urlsplit(url)
    if not parts.hostname:
        raise CtxprobeError(f"bad model spec '{model}': the base URL has no host; {_SERVED_HINT}")
    if parts.username or parts.password:
        # A credential in the URL would end up in the run's identity and in reports.
        raise CtxprobeError(f"bad model spec for '{name}': put credentials in CTXPROBE_API_KEY, not in the URL")
    return ModelRef(provider, name, url, "", model)


def _ref(provider: str, body: str, raw: str) -> ModelRef:
    name, _, query = body.partition("?")
    return ModelRef(provider, name, None, query, raw)


def parse_model(model: str, base_url: str | None = None) -> ModelRef:
    """The one parser of model references; a one-line :class:`CtxprobeError` with a suggestion if none fits."""
    spec = model.strip()
    slash_names, served, bare = _spellings()
    if spec in bare:
        return ModelRef(spec, "", None, "", model, bare=True)
    if base_url is not None:
        _check_url(base_url.strip(), "--base-url")
    colon = spec.split(":", 1)[0] if ":" in spec else None
    slash = spec.split("/", 1)[0] if "/" in spec else None
    # ``provider/`` wins when the slash comes first (``openai/gpt-4o``, ``vllm/org/model:tag``)
    if slash is not None and (colon is None or len(slash) < len(colon)):
        provider, name = spec.split("/", 1)
        if not name:
            raise CtxprobeError(f"model '{model}' names no model after '{provider}/'")
        fallback = _fallback(slash_names.get(provider))
        if provider in served or (fallback and base_url):
            target, _, envs = served.get(provider) or served[fallback or ""]
            envs = envs if provider in served else ("OPENAI_BASE_URL",)
            url = _base_url(envs, base_url)
            if url is None:
                raise CtxprobeError(f"model '{model}' is served at a URL: pass --base-url http://HOST:PORT/v1 "
                                    f"or set {' or '.join(envs)}")
            return served_ref(model, target, f"{name}@{_check_url(url, 'base URL')}")
        if provider in slash_names:
            return _ref(slash_names[provider], name, model)
        raise CtxprobeError(_unknown(model, provider, name, "/", slash_names, served))
    if colon is not None:
        provider, name = spec.split(":", 1)
        if provider in served and served[provider][0] == provider:
            if "@" not in name:
                url = _base_url(served[provider][2], base_url)
                if url is None:
                    raise CtxprobeError(f"model '{model}' needs the server's URL: {provider}:{name}@http://HOST:PORT/v1, "
                                        "--base-url, or OPENAI_BASE_URL")
                name = f"{name}@{_check_url(url, 'base URL')}"
            return served_ref(model, provider, name)
        if provider in slash_names and slash_names[provider] == provider:
            return _ref(provider, name, model)
        raise CtxprobeError(_unknown(model, provider, name, ":", slash_names, served))
    raise CtxprobeError(_unknown(model, None, spec, "/", slash_names, served))


def _fallback(provider: str | None) -> str | None:
    entry = registry.find("providers", provider) if provider else None
    return entry.meta.get("url_fallback") if entry is not None else None


@lru_cache(maxsize=256)
def model_ref(spec: str) -> ModelRef:
    """The ref of a canonical spec string (as :class:`ctxprobe.spec.Spec` holds it), parsed once."""
    return parse_model(spec)


def canonical_model(model: str, base_url: str | None = None) -> str:
    """The canonical spec string for ``model`` (:attr:`ModelRef.spec` of :func:`parse_model`)."""
    return parse_model(model, base_url).spec


def _unknown(model: str, provider: str | None, name: str, sep: str, slash_names: dict[str, str],
             served: dict[str, tuple[str, str, tuple[str, ...]]]) -> str:
    head = f"unknown model '{model}'"
    if provider is None:
        lowered = name.lower()
        for entry in registry.entries("providers"):  # bare names that clearly belong to one provider
            if any(lowered.startswith(prefix) for prefix in provider_info(entry.name).bare_hints):
                return f"{head}: did you mean {entry.name}/{name}? (models are named PROVIDER/NAME)"
        return (f"{head}: name it PROVIDER/NAME, e.g. openai/gpt-4o, vllm/NAME with --base-url, sim/perfect, "
                "openai-compat:NAME@BASE_URL, or local")
    known = sorted({*slash_names, *served})
    close = difflib.get_close_matches(provider.lower(), known, n=1, cutoff=0.65)
    if close:
        return f"{head}: did you mean {close[0]}{sep}{name}?"
    return (f"{head}: unknown provider '{provider}'; name it PROVIDER/NAME with PROVIDER one of {', '.join(known)}, "
            "or openai-compat:NAME@BASE_URL, or local")


def location_free(model: str) -> str:
    """``openai-compat:NAME@URL`` → ``openai-compat:NAME``: what a run's identity keeps of a
    server model (where it is served does not change what it is). A name that is already
    location-free (no ``@URL``) is its own identity."""
    try:
        return model_ref(model).identity
    except CtxprobeError:
        return model.strip()
