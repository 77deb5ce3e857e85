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

from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers.base import Message, SupportsCountMany, Tokenizer

__all__ = [
    "Message", "SupportsCountMany", "Tokenizer", "count_many", "infer_tokenizer", "is_approximate",
    "resolve_tokenizer",
]

ACCEPTED_FORMS = (
    "'local', 'gguf:/path/model.gguf', 'hf:/path/to/tokenizer-folder', 'tiktoken:o200k_base', "
    "'tiktoken:cl100k_base', 'endpoint[:BASE_URL]', 'approx[:CHARS_PER_TOKEN]', "
    "'anthropic-count:MODEL', 'gemini-count:MODEL', or a path"
)

_CACHE: dict[str, Tokenizer] = {}
_CACHE_LOCK = threading.Lock()


def _bad(name: str, why: str) -> CtxprobeError:
    return CtxprobeError(f"cannot use tokenizer {name!r}: {why}; use {ACCEPTED_FORMS}")


def _build(name: str) -> Tokenizer:
    if not name:
        raise _bad(name, "empty name")
    scheme, sep, rest = name.partition(":")
    if name == "local":
        # The embedded SmolLM2's vocabulary extracted from its GGUF, on a prebuilt BPE: the same
        # ids as llama.cpp (tests/tokenizers/test_light.py checks it against llama.cpp's server).
        from ctxprobe.tokenizers.light import LightTokenizer

        return LightTokenizer(name="local")
    if sep and scheme == "gguf":
        from ctxprobe.tokenizers.xllama import XLlamaTokenizer

        path = Path(rest).expanduser()
        if not path.is_file():
            raise _bad(name, f"no file {rest}")
        return XLlamaTokenizer(path, name=name)
    if scheme in ("tiktoken", "endpoint", "approx", "anthropic-count", "gemini-count"):
        return _build_remote_or_estimate(name, scheme, rest)
    if sep and scheme == "hf":
        from ctxprobe.tokenizers.hf import HFTokenizer

        path = Path(rest).expanduser()
        if not (path.is_file() or (path / "tokenizer.json").is_file()):
            raise _bad(name, f"no tokenizer.json at {rest}")
        return HFTokenizer(path, name=name)
    # A bare path; "C:\\..." style drive letters are paths, other "x:" prefixes are schemes.
    if sep and len(scheme) > 1 and not Path(name).expanduser().exists():
        raise _bad(name, f"unknown scheme '{scheme}:'")
    path = Path(name).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        from ctxprobe.tokenizers.xllama import XLlamaTokenizer

        return XLlamaTokenizer(path, name=name)
    if (path.is_file() and path.name.endswith(".json")) or (path / "tokenizer.json").is_file():
        from ctxprobe.tokenizers.hf import HFTokenizer

        return HFTokenizer(path, name=name)
    if path.exists():
        raise _bad(name, "not a .gguf file, a tokenizer.json, or a folder holding one")
    raise _bad(name, "no such file or folder")


def _build_remote_or_estimate(name: str, scheme: str, rest: str) -> Tokenizer:
    """The non-file backends: tiktoken, a server's /tokenize, provider count APIs, approx."""
    from urllib.parse import parse_qsl

    if scheme == "tiktoken":
        from ctxprobe.tokenizers.tiktoken_tok import ENCODINGS, TiktokenTokenizer

        if rest not in ENCODINGS:
            raise _bad(name, f"unknown encoding '{rest}' (offline: {', '.join(ENCODINGS)})")
        return TiktokenTokenizer(rest, name=name)
    if scheme == "approx":
        from ctxprobe.tokenizers.approx import DEFAULT_CHARS_PER_TOKEN, ApproxTokenizer

        try:
            ratio = float(rest) if rest else DEFAULT_CHARS_PER_TOKEN
        except ValueError:
            raise _bad(name, "approx takes characters per token, e.g. approx:3.8") from None
        return ApproxTokenizer(ratio, name=name)
    if scheme == "endpoint":
        from ctxprobe.tokenizers.endpoint import EndpointTokenizer

        url, _, query = rest.partition("?")
        if not url:
            raise _bad(name, "bare 'endpoint' needs the model's server: use it with an openai-compat: model")
        opts = dict(parse_qsl(query))
        unknown = set(opts) - {"kind", "model"}
        if unknown:
            raise _bad(name, f"unknown endpoint option(s) {sorted(unknown)} (accepted: kind, model)")
        return EndpointTokenizer(url, kind=opts.get("kind"), model=opts.get("model"), name=name)
    if not rest:
        raise _bad(name, f"{scheme} needs a model name, e.g. {scheme}:MODEL")
    if scheme == "anthropic-count":
        from ctxprobe.tokenizers.api_count import AnthropicCountTokenizer

        return AnthropicCountTokenizer(rest, name=name)
    from ctxprobe.tokenizers.api_count import GeminiCountTokenizer

    return GeminiCountTokenizer(rest, name=name)


#: OpenAI model-name prefixes → encoding (longest prefix wins). Source: tiktoken's
#: ``model.py`` MODEL_PREFIX_TO_ENCODING, extended with the newer families.
_OPENAI_ENCODINGS: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"), ("gpt-4.1", "o200k_base"), ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"), ("chatgpt-4o", "o200k_base"), ("o1", "o200k_base"),
    ("o3", "o200k_base"), ("o4", "o200k_base"), ("gpt-oss", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-3.5", "cl100k_base"), ("gpt-35", "cl100k_base"),
)


def infer_tokenizer(model: str) -> str:
    """The tokenizer a model is measured with when the spec names none (the sweep prints it).

    Exact wherever possible: the embedded/GGUF/HF files, tiktoken for OpenAI, the
    serving endpoint itself for OpenAI-compatible servers; ``approx`` only for providers
    that publish no tokenizer (Anthropic, Gemini) — name ``anthropic-count:MODEL`` /
    ``gemini-count:MODEL`` to have their counting APIs give exact per-case counts instead.
    """
    spec = model.strip()
    provider, _, rest = spec.partition(":")
    bare = rest.split("?", 1)[0]
    if spec == "local" or provider == "sim":
        return "local"  # the embedded SmolLM2 GGUF's tokenizer and chat template
    if provider == "llamacpp":
        return "gguf:" + bare
    if provider == "hf":
        return "hf:" + bare
    if provider == "openai":
        name = bare.lower().split("/")[-1]
        for prefix, encoding in _OPENAI_ENCODINGS:
            if name.startswith(prefix):
                return f"tiktoken:{encoding}"
        return "tiktoken:o200k_base"  # every current OpenAI chat model uses it
    if provider == "openai-compat":
        return _endpoint_for(spec)
    if provider in ("anthropic", "gemini"):
        return "approx"
    raise CtxprobeError(f"cannot infer a tokenizer for model '{model}': name one with --tokenizer ({ACCEPTED_FORMS})")


def _endpoint_for(model: str) -> str:
    """``openai-compat:NAME@URL`` → ``endpoint:URL?model=NAME`` (its own server counts)."""
    import re
    from urllib.parse import quote

    # Same grammar as models.openai_compat.parse_model_spec (not imported: tokenizers sit
    # below models in the layering).
    match = re.match(r"^openai-compat:(?P<name>\S+?)@(?P<url>https?://\S+)$", model)
    if not match:
        raise CtxprobeError(f"bad model spec '{model}': expected openai-compat:NAME@BASE_URL")
    url = match.group("url").rstrip("/")
    return f"endpoint:{url}?model={quote(match.group('name'), safe='')}"


def is_approximate(tokenizer: Tokenizer) -> bool:
    """Whether counts are estimates (the sweep must say so loudly, see approx.WARNING)."""
    return bool(getattr(tokenizer, "is_approximate", False))


def resolve_tokenizer(name: str, model: str | None = None) -> Tokenizer:
    """The tokenizer a spec names; instances are cached by name (loading is not free).

    ``model`` resolves the bare ``endpoint`` form to the model's own server."""
    name = name.strip()
    if name == "endpoint":
        if not model or not model.strip().startswith("openai-compat:"):
            raise _bad(name, "bare 'endpoint' means the model's own server: use an openai-compat: model "
                             "or give endpoint:BASE_URL")
        name = _endpoint_for(model.strip())
    with _CACHE_LOCK:
        cached = _CACHE.get(name)
    if cached is not None:
        return cached
    tokenizer = _build(name)
    with _CACHE_LOCK:
        return _CACHE.setdefault(name, tokenizer)


def count_many(tokenizer: Tokenizer, texts: list[str]) -> list[int]:
    """Batched counts when the backend offers them, else one ``count`` per text."""
    if isinstance(tokenizer, SupportsCountMany):
        return tokenizer.count_many(texts)
    return [tokenizer.count(t) for t in texts]
