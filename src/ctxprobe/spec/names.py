"""Model references: every spelling people type, parsed once into a typed :class:`ModelRef`.

Accepted beside the native ``provider:name`` forms of the registered providers:

- ``openai/gpt-4o`` → ``openai:gpt-4o``; ``anthropic/…`` → ``anthropic:…``; ``gemini/…``
  and ``google/…`` → ``gemini:…``; ``hf/PATH`` → ``hf:PATH``; ``sim/KIND`` → ``sim:KIND``
  (the inspect / litellm ``provider/model`` form);
- ``openai-api/NAME``, ``vllm/NAME``, ``sglang/NAME`` and ``openai-compat/NAME`` → an
  OpenAI-compatible server: ``openai-compat:NAME@BASE_URL`` with the URL from ``base_url``
  (``--base-url``), else ``OPENAI_BASE_URL`` (``VLLM_BASE_URL`` / ``SGLANG_BASE_URL`` first
  for those two); ``openai/NAME`` with an explicit ``--base-url`` goes there too.

The one grammar (canonical form, what :attr:`ModelRef.spec` writes and this module reads
back)::

    BARE                                  a provider named alone (``local``)
    PROVIDER:NAME[?OPTIONS][@BASE_URL]    BASE_URL = the first ``@http://`` / ``@https://`` on

``NAME`` ends at the first ``?`` (``hf:/m/qwen?dtype=bfloat16``) and may hold ``@``
(``llamacpp:/m/x@v2.gguf``, ``openai-compat:org/m@8bit@http://h/v1``); ``BASE_URL`` may
hold ``?`` (``…@http://h/v1?api-version=1``). Only a provider registered with
``served_as`` takes a ``BASE_URL`` (and needs one).

Every spelling is parsed once, by :func:`parse_model`, into a :class:`ModelRef`: a ``str``
whose value is the canonical spec (so a run's identity, a stored spec and a price-file key
read it as before) carrying its parsed parts, which the spec, catalog, pricing, decide and
the providers read instead of cutting the string again. Which providers exist, and how
each is spelled, comes from the registry (group ``providers``,
:mod:`ctxprobe.core.registry`), so a plugin's provider is named like a built-in one. Near
misses get a "did you mean". Pure string work: no provider is imported here.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from ctxprobe.core import registry
from ctxprobe.core.catalog import provider_info
from ctxprobe.errors import CtxprobeError

_URL = re.compile(r"^https?://\S+$")
#: Where a served model's base URL starts: the first ``@http://`` or ``@https://``.
_AT_URL = re.compile(r"@(?=https?://)")
_SERVED_HINT = "expected openai-compat:NAME@BASE_URL, e.g. openai-compat:qwen2.5@http://127.0.0.1:8000/v1"


class ModelRef(str):
    """A model reference, parsed once: which provider, which model, where it is served.

    The value is the canonical spec string (``sim:decay?cliff=4096``,
    ``openai-compat:qwen@http://127.0.0.1:8000/v1``, ``local``): equal to, hashed and
    serialised as that string. ``provider`` is a registry name (``sim``,
    ``openai-compat``, ``local``, a plugin's name); ``name`` the model as that provider
    knows it, options stripped; ``base_url`` set for served models (``NAME@BASE_URL``);
    ``query`` the options as typed (``k=v&k2=v2``); ``raw`` what the user wrote;
    ``bare``: spelled by the provider's name alone (``local``). Immutable."""

    provider: str
    name: str
    base_url: str | None
    query: str
    raw: str
    bare: bool

    def __new__(cls, provider: str, name: str, base_url: str | None = None, query: str = "", raw: str = "",
                bare: bool = False) -> ModelRef:
        text = provider if bare else (f"{provider}:{name}" + (f"?{query}" if query else "")
                                      + (f"@{base_url}" if base_url else ""))
        self = super().__new__(cls, text)
        self.__dict__.update(provider=provider, name=name, base_url=base_url, query=query, raw=raw or text,
                             bare=bare)
        return self

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"ModelRef is immutable (cannot set {key})")

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by its parts (build workers, Ray)
        return (ModelRef, (self.provider, self.name, self.base_url, self.query, self.raw, self.bare))

    def __repr__(self) -> str:
        return f"ModelRef({str.__str__(self)!r})"

    @property
    def spec(self) -> str:
        """The canonical string (what run ids are made from), as a plain ``str``; parses back to this ref."""
        return str.__str__(self)

    @property
    def options(self) -> dict[str, str]:
        return dict(parse_qsl(self.query, keep_blank_values=True))

    @property
    def identity(self) -> str:
        """What a run's identity keeps: the spec without where a server model is served."""
        if self.bare or self.base_url is None:
            return self.spec
        return f"{self.provider}:{self.name}" + (f"?{self.query}" if self.query else "")

    @property
    def plain(self) -> str:
        """``provider:name``: no options, no URL (the catalog's key)."""
        return self.provider if self.bare else f"{self.provider}:{self.name}"

    @property
    def located(self) -> str:
        """The spec without its options: ``provider:name[@BASE_URL]``."""
        return self.plain + (f"@{self.base_url}" if self.base_url else "")

    def price_keys(self) -> tuple[str, ...]:
        """The keys a price table is searched by, most specific first: the spec itself (a
        price file may price one option set apart from another), without its options,
        without where it is served, then ``provider:name``."""
        return tuple(dict.fromkeys((self.spec, self.located, self.identity, self.plain)))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """A pydantic field typed ``ModelRef`` accepts any spelling (parsed by
        :func:`parse_model`) and serialises to the canonical string."""
        return core_schema.json_or_python_schema(
            json_schema=core_schema.no_info_after_validator_function(_validate, core_schema.str_schema()),
            python_schema=core_schema.no_info_plain_validator_function(_validate),
            serialization=core_schema.plain_serializer_function_ser_schema(str.__str__))


def _validate(value: object) -> ModelRef:
    if isinstance(value, ModelRef):
        return value
    if isinstance(value, str):
        return parse_model(value)
    raise CtxprobeError(f"a model must be named by a string such as sim:perfect or openai/gpt-4o, not {value!r}")


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


def _split(body: str) -> tuple[str, str, str | None]:
    """``NAME[?OPTIONS][@BASE_URL]`` → (name, options, base URL or None): the grammar's one cut."""
    at = _AT_URL.search(body)
    head, url = (body[: at.start()], body[at.end():]) if at else (body, None)
    name, _, query = head.partition("?")
    return name, query, url


def served_ref(model: str, provider: str, body: str, *, located: bool = True) -> ModelRef:
    """``body`` = ``NAME[?OPTIONS]@BASE_URL`` of a served model (trailing ``/`` dropped); no
    credentials in the URL. ``located=False`` accepts a name without its URL (a price-file key)."""
    name, query, url = _split(body)
    if url is None and not located and name and not any(c.isspace() for c in name):
        return ModelRef(provider, name, None, query, model)
    if url is None or not name or any(c.isspace() for c in name) or not _URL.match(url):
        raise CtxprobeError(f"bad model spec '{model}': {_SERVED_HINT}")
    url = url.rstrip("/")
    parts = urlsplit(url)
    if not parts.hostname:
        raise CtxprobeError(f"bad model spec '{model}': the base URL has no host; {_SERVED_HINT}")
    if parts.username or parts.password:
        # A credential in the URL would end up in the run's identity and in reports.
        raise CtxprobeError(f"bad model spec for '{name}': put credentials in CTXPROBE_API_KEY, not in the URL")
    return ModelRef(provider, name, url, query, model)


def _ref(provider: str, body: str, raw: str) -> ModelRef:
    name, _, query = body.partition("?")  # not served: an '@' is part of the name (a path, a tag)
    return ModelRef(provider, name, None, query, raw)


def parse_model(model: str, base_url: str | None = None, *, located: bool = True) -> ModelRef:
    """The one parser of model references; a one-line :class:`CtxprobeError` with a suggestion if none fits.

    ``located=False``: a served model may come without its URL (``openai-compat:NAME``, as
    a price file names one); its ref then has ``base_url`` None."""
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
            if url is None and not located:
                return served_ref(model, target, name, located=False)
            if url is None:
                raise CtxprobeError(f"model '{model}' is served at a URL: pass --base-url http://HOST:PORT/v1 "
                                    f"or set {' or '.join(envs)}")
            return served_ref(model, target, f"{name}@{_check_url(url, 'base URL')}")
        if provider in slash_names:
            if base_url:  # an SDK provider's own endpoint is its variable's: said, never silently ignored
                raise CtxprobeError(_unread_base_url(slash_names[provider]))
            return _ref(slash_names[provider], name, model)
        raise CtxprobeError(_unknown(model, provider, name, "/", slash_names, served))
    if colon is not None:
        provider, name = spec.split(":", 1)
        if provider in served and served[provider][0] == provider:
            if _AT_URL.search(name) is None:
                url = _base_url(served[provider][2], base_url)
                if url is None and not located:
                    return served_ref(model, provider, name, located=False)
                if url is None:
                    raise CtxprobeError(f"model '{model}' needs the server's URL: {provider}:{name}@http://HOST:PORT/v1, "
                                        "--base-url, or OPENAI_BASE_URL")
                name = f"{name}@{_check_url(url, 'base URL')}"
            return served_ref(model, provider, name)
        if provider in slash_names and slash_names[provider] == provider:
            if base_url:
                raise CtxprobeError(_unread_base_url(provider))
            return _ref(provider, name, model)
        raise CtxprobeError(_unknown(model, provider, name, ":", slash_names, served))
    raise CtxprobeError(_unknown(model, None, spec, "/", slash_names, served))


#: The variable each SDK provider reads its endpoint from (``--base-url`` is not read for them).
_ENDPOINT_VARS = {"anthropic": "ANTHROPIC_BASE_URL", "gemini": "GEMINI_BASE_URL"}


def _unread_base_url(provider: str) -> str:
    var = _ENDPOINT_VARS.get(provider)
    if var:
        return (f"--base-url is not read for {provider}/ models (the SDK would call its default host): "
                f"set {var} instead, or drop --base-url")
    return f"--base-url is for served models and openai/: {provider}/ models take none; drop it"


def _fallback(provider: str | None) -> str | None:
    entry = registry.find("providers", provider) if provider else None
    return entry.meta.get("url_fallback") if entry is not None else None


@lru_cache(maxsize=256)
def model_ref(spec: str) -> ModelRef:
    """The ref of a canonical spec string, parsed once (strict: an unknown provider raises)."""
    return parse_model(spec)


@lru_cache(maxsize=1024)
def _stored(text: str) -> ModelRef:
    try:
        return parse_model(text, located=False)
    except CtxprobeError:  # a provider no longer installed (a plugin's), or a hand-written key
        head, sep, body = text.strip().partition(":")
        if not sep:
            return ModelRef(head, "", None, "", text, bare=True)
        name, query, url = _split(body)
        return ModelRef(head, name, url, query, text)


def as_ref(model: str) -> ModelRef:
    """``model`` itself when it is already a :class:`ModelRef`, else the ref of a stored or
    canonical string (a run's model from the store, a price-file key). Never raises: a
    provider this install does not know is read by the grammar alone."""
    return model if isinstance(model, ModelRef) else _stored(model)


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
    return as_ref(model).identity
