"""Tokenizer backends behind one protocol, resolved from the spec's tokenizer string.

Accepted forms: ``local`` (the embedded SmolLM2 GGUF), ``gguf:/path/model.gguf``,
``hf:/path/to/folder-or-tokenizer.json``, ``tiktoken:cl100k_base|o200k_base``,
``endpoint:BASE_URL[?kind=…&model=…]`` (or bare ``endpoint``: the model's own server),
``approx[:CHARS_PER_TOKEN]``, ``anthropic-count:MODEL``, ``gemini-count:MODEL``, or a bare
path (a ``.gguf`` file, a folder holding ``tokenizer.json``, or a ``tokenizer.json``
file). Backends import their heavy libraries lazily, so importing this package costs
nothing. :func:`infer_tokenizer` picks the default for a model spec.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ctxprobe.core import registry
from ctxprobe.core.catalog import provider_info
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import ModelRef, as_ref, model_ref
from ctxprobe.tokenizers.base import Message, SupportsCountMany, Tokenizer, TokenizerBase, with_tokenizer_defaults

__all__ = [
    "Message", "SupportsCountMany", "Tokenizer", "TokenizerBase", "count_many", "infer_tokenizer", "is_approximate",
    "resolve_tokenizer",
]

_OWN_FORMS = ("'local', 'gguf:/path/model.gguf', 'hf:/path/to/tokenizer-folder', 'tiktoken:o200k_base', "
              "'tiktoken:cl100k_base', 'endpoint[:BASE_URL]', 'approx[:CHARS_PER_TOKEN]'")


def _providers_schemes() -> list[str]:
    """The tokenizer schemes providers bring (their counting APIs, ``anthropic-count``),
    registered with their declarations: each spelled ``NAME:MODEL``."""
    return [e.name for e in registry.entries("tokenizers") if e.meta.get("provider")]


def accepted_forms() -> str:
    """Every tokenizer form, for errors: ctxprobe's own, then the providers' counting APIs."""
    return ", ".join([_OWN_FORMS, *(f"'{name}:MODEL'" for name in _providers_schemes())]) + ", or a path"

_CACHE: dict[str, Tokenizer] = {}
_CACHE_LOCK = threading.Lock()


def bad_tokenizer(name: str, why: str) -> CtxprobeError:
    """The one-line error for a tokenizer name that cannot be used (schemes raise it too)."""
    return CtxprobeError(f"cannot use tokenizer {name!r}: {why}; use {accepted_forms()}")


def _build(name: str) -> Tokenizer:
    if not name:
        raise bad_tokenizer(name, "empty name")
    scheme, sep, rest = name.partition(":")
    entry = registry.find("tokenizers", scheme)
    if entry is not None and (sep or entry.meta.get("bare")):
        return entry.load()(name, rest)
    # A bare path; "C:\\..." style drive letters are paths, other "x:" prefixes are schemes.
    if sep and len(scheme) > 1 and not Path(name).expanduser().exists():
        raise bad_tokenizer(name, f"unknown scheme '{scheme}:'{_guess(scheme)}")
    path = Path(name).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        from ctxprobe.tokenizers.xllama import XLlamaTokenizer

        return XLlamaTokenizer(path, name=name)
    if (path.is_file() and path.name.endswith(".json")) or (path / "tokenizer.json").is_file():
        from ctxprobe.tokenizers.hf import HFTokenizer

        return HFTokenizer(path, name=name)
    if path.exists():
        raise bad_tokenizer(name, "not a .gguf file, a tokenizer.json, or a folder holding one")
    raise _unknown(name)


#: Names a bare word is compared with for "did you mean" (the fixed forms' spellings; the
#: providers' counting schemes are added from the registry).
_KNOWN_NAMES = ("local", "approx", "endpoint", "tiktoken:o200k_base", "tiktoken:cl100k_base", "gguf:", "hf:")


def _unknown(name: str) -> CtxprobeError:
    """A name that is no form and no existing path: most often a typo or a hub model id."""
    import difflib

    if name.startswith(("/", ".", "~")) or "\\" in name or name.lower().endswith((".gguf", ".json")):
        return bad_tokenizer(name, "no such file or folder")
    close = difflib.get_close_matches(name.lower(), [*_KNOWN_NAMES, *(f"{n}:" for n in _providers_schemes())], n=1,
                                    cutoff=0.6)
    if close:
        hint = f"; did you mean '{close[0]}'"
    elif "/" in name:
        hint = " (not a local path; nothing is downloaded: for a hub model give hf:/path/to/its/folder)"
    else:
        hint = ""
    return CtxprobeError(f"unknown tokenizer '{name}'{hint}; accepted forms: {accepted_forms()}")


def _guess(word: str) -> str:
    close = registry.did_you_mean(word, registry.names("tokenizers"))
    return f" (did you mean '{close}'?)" if close else ""


def infer_tokenizer(model: str) -> str:
    """The tokenizer a model is measured with when the spec names none (the sweep prints it):
    its provider's declared default (:attr:`ctxprobe.core.catalog.ProviderInfo.default_tokenizer`).

    Exact wherever possible: the embedded/GGUF/HF files, tiktoken for OpenAI, the
    serving endpoint itself for OpenAI-compatible servers; ``approx`` only for providers
    that publish no tokenizer (Anthropic, Gemini) — name ``anthropic-count:MODEL`` /
    ``gemini-count:MODEL`` to have their counting APIs give exact per-case counts instead.
    """
    try:
        ref = model if isinstance(model, ModelRef) else model_ref(model.strip())
    except CtxprobeError:
        raise CtxprobeError(f"cannot infer a tokenizer for model '{model}': name one with --tokenizer "
                            f"({accepted_forms()})") from None
    if ref.provider == "openai-compat" and ref.base_url is None:
        raise CtxprobeError(f"bad model spec '{model}': expected openai-compat:NAME@BASE_URL")
    default = provider_info(ref.provider).tokenizer_for(ref.name, ref.base_url)
    if default is not None and default.startswith("gguf:") and not Path(ref.name).expanduser().is_file():
        # the model's own file is missing: say so, not that the tokenizer inferred from it is
        raise CtxprobeError(f"cannot load model '{model}': no GGUF file {ref.name}; give the path of a .gguf "
                            "model file")
    if default is None:
        raise CtxprobeError(f"cannot infer a tokenizer for model '{model}': name one with --tokenizer "
                            f"({accepted_forms()})")
    return default


def _endpoint_for(model: str) -> str:
    """``openai-compat:NAME@URL`` → ``endpoint:URL?model=NAME`` (its own server counts)."""
    from urllib.parse import quote

    ref = model_ref(model)
    if ref.base_url is None:
        raise CtxprobeError(f"bad model spec '{model}': expected openai-compat:NAME@BASE_URL")
    return f"endpoint:{ref.base_url}?model={quote(ref.name, safe='')}"


def is_approximate(tokenizer: Tokenizer) -> bool:
    """Whether counts are estimates (the sweep must say so loudly, see approx.WARNING)."""
    return bool(tokenizer.is_approximate)


def resolve_tokenizer(name: str, model: str | None = None) -> Tokenizer:
    """The tokenizer a spec names; instances are cached by name (loading is not free).

    ``model`` resolves the bare ``endpoint`` form to the model's own server."""
    name = name.strip()
    if name == "endpoint":
        if not model or as_ref(model.strip()).provider != "openai-compat":
            raise bad_tokenizer(name, "bare 'endpoint' means the model's own server: use an openai-compat: model "
                             "or give endpoint:BASE_URL")
        name = _endpoint_for(model.strip())
    with _CACHE_LOCK:
        cached = _CACHE.get(name)
    if cached is not None:
        return cached
    tokenizer = with_tokenizer_defaults(_build(name))  # a plugin's that does not inherit TokenizerBase
    with _CACHE_LOCK:
        return _CACHE.setdefault(name, tokenizer)


def count_many(tokenizer: Tokenizer, texts: list[str]) -> list[int]:
    """Batched counts (one ``count`` per text where the backend has no faster way)."""
    return tokenizer.count_many(texts)
