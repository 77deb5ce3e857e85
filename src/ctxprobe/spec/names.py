"""Model names as people already type them, mapped onto ctxprobe's ``provider:name`` specs.

Accepted beside the native forms (see ``ctxprobe.models.ACCEPTED_FORMS``):

- ``openai/gpt-4o`` → ``openai:gpt-4o``; ``anthropic/…`` → ``anthropic:…``; ``gemini/…``
  and ``google/…`` → ``gemini:…``; ``hf/PATH`` → ``hf:PATH``; ``sim/KIND`` → ``sim:KIND``
  (the inspect / litellm ``provider/model`` form);
- ``openai-api/NAME``, ``vllm/NAME``, ``sglang/NAME`` and ``openai-compat/NAME`` → an
  OpenAI-compatible server: ``openai-compat:NAME@BASE_URL`` with the URL from ``base_url``
  (``--base-url``), else ``OPENAI_BASE_URL`` (``VLLM_BASE_URL`` / ``SGLANG_BASE_URL`` first
  for those two); ``openai/NAME`` with an explicit ``--base-url`` goes there too.

Near misses get a "did you mean". Pure string work: no provider is imported here, so
:mod:`ctxprobe.spec` can canonicalise the model while it validates.
"""

from __future__ import annotations

import difflib
import os
import re

from ctxprobe.errors import CtxprobeError

#: ``PROVIDER/`` prefixes spelled the inspect/litellm way → our ``PROVIDER:`` prefix.
SLASH_PROVIDERS: dict[str, str] = {
    "openai": "openai", "anthropic": "anthropic", "gemini": "gemini", "google": "gemini", "hf": "hf",
    "sim": "sim", "llamacpp": "llamacpp",
}
#: ``PROVIDER/NAME`` forms that mean an OpenAI-compatible server at a base URL.
SERVER_PROVIDERS: dict[str, tuple[str, ...]] = {
    "openai-api": ("OPENAI_BASE_URL",),
    "openai-compat": ("OPENAI_BASE_URL",),
    "vllm": ("VLLM_BASE_URL", "OPENAI_BASE_URL"),
    "sglang": ("SGLANG_BASE_URL", "OPENAI_BASE_URL"),
}
NATIVE_PREFIXES = ("sim", "openai-compat", "llamacpp", "openai", "anthropic", "gemini", "hf")
#: Bare model names that clearly belong to one provider (for "did you mean").
_BARE_HINTS = (("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
               ("chatgpt", "openai"), ("claude", "anthropic"), ("gemini", "gemini"))
_URL = re.compile(r"^https?://\S+$")


def _base_url(provider: str, base_url: str | None) -> str | None:
    if base_url:
        return base_url.strip().rstrip("/")
    for var in SERVER_PROVIDERS.get(provider, ("OPENAI_BASE_URL",)):
        value = os.environ.get(var, "").strip()
        if value:
            return value.rstrip("/")
    return None


def _check_url(url: str, where: str) -> str:
    if not _URL.match(url):
        raise CtxprobeError(f"base URL '{url}' ({where}) must start with http:// or https://, "
                            "e.g. http://127.0.0.1:8000/v1")
    return url


def canonical_model(model: str, base_url: str | None = None) -> str:
    """The native spec for ``model``; a one-line :class:`CtxprobeError` with a suggestion if none fits."""
    spec = model.strip()
    if spec == "local":
        return spec
    if base_url is not None:
        _check_url(base_url.strip(), "--base-url")
    colon = spec.split(":", 1)[0] if ":" in spec else None
    slash = spec.split("/", 1)[0] if "/" in spec else None
    # ``provider/`` wins when the slash comes first (``openai/gpt-4o``, ``vllm/org/model:tag``)
    if slash is not None and (colon is None or len(slash) < len(colon)):
        provider, name = spec.split("/", 1)
        if not name:
            raise CtxprobeError(f"model '{model}' names no model after '{provider}/'")
        if provider in SERVER_PROVIDERS or (provider == "openai" and base_url):
            url = _base_url(provider, base_url)
            if url is None:
                envs = " or ".join(SERVER_PROVIDERS.get(provider, ("OPENAI_BASE_URL",)))
                raise CtxprobeError(f"model '{model}' is served at a URL: pass --base-url http://HOST:PORT/v1 "
                                    f"or set {envs}")
            return f"openai-compat:{name}@{_check_url(url, 'base URL')}"
        if provider in SLASH_PROVIDERS:
            return f"{SLASH_PROVIDERS[provider]}:{name}"
        raise CtxprobeError(_unknown(model, provider, name, "/"))
    if colon is not None:
        provider, name = spec.split(":", 1)
        if provider == "openai-compat" and "@" not in name:
            url = _base_url(provider, base_url)
            if url is None:
                raise CtxprobeError(f"model '{model}' needs the server's URL: openai-compat:{name}@http://HOST:PORT/v1, "
                                    "--base-url, or OPENAI_BASE_URL")
            return f"openai-compat:{name}@{_check_url(url, 'base URL')}"
        if provider in NATIVE_PREFIXES:
            return spec
        raise CtxprobeError(_unknown(model, provider, name, ":"))
    raise CtxprobeError(_unknown(model, None, spec, "/"))


def _unknown(model: str, provider: str | None, name: str, sep: str) -> str:
    head = f"unknown model '{model}'"
    if provider is None:
        lowered = name.lower()
        for prefix, guess in _BARE_HINTS:
            if lowered.startswith(prefix):
                return f"{head}: did you mean {guess}/{name}? (models are named PROVIDER/NAME)"
        return (f"{head}: name it PROVIDER/NAME, e.g. openai/gpt-4o, vllm/NAME with --base-url, sim/perfect, "
                "openai-compat:NAME@BASE_URL, or local")
    known = sorted({*SLASH_PROVIDERS, *SERVER_PROVIDERS, *NATIVE_PREFIXES})
    close = difflib.get_close_matches(provider.lower(), known, n=1, cutoff=0.65)
    if close:
        return f"{head}: did you mean {close[0]}{sep}{name}?"
    return (f"{head}: unknown provider '{provider}'; name it PROVIDER/NAME with PROVIDER one of {', '.join(known)}, "
            "or openai-compat:NAME@BASE_URL, or local")


def location_free(model: str) -> str:
    """``openai-compat:NAME@URL`` → ``openai-compat:NAME``: what a run's identity keeps of a
    server model (where it is served does not change what it is)."""
    match = re.match(r"^openai-compat:(?P<name>\S+?)@https?://\S+$", model)
    return f"openai-compat:{match.group('name')}" if match else model
