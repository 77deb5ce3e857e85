"""ctxprobe's own tokenizer schemes: ``factory(name, rest)`` for ``NAME:REST`` (registered
in :mod:`ctxprobe.core.builtins`). Each imports its backend only when called. A provider's
counting API is its own scheme, in its folder (``ctxprobe/providers/anthropic/count.py``),
registered with its declaration."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.tokenizers import bad_tokenizer
from ctxprobe.tokenizers.base import Tokenizer


def local(name: str, rest: str) -> Tokenizer:
    """``local``: the embedded SmolLM2's vocabulary extracted from its GGUF, on a prebuilt BPE:
    the same ids as llama.cpp (tests/integration/tokenizers/test_light.py checks it against llama.cpp's
    server), with no engine loaded."""
    if rest:
        raise bad_tokenizer(name, "'local' takes no argument")
    from ctxprobe.tokenizers.light import LightTokenizer

    return LightTokenizer(name="local")


def gguf(name: str, rest: str) -> Tokenizer:
    """``gguf:PATH``: llama.cpp's own /apply-template + /tokenize on an in-process server."""
    from ctxprobe.tokenizers.xllama import XLlamaTokenizer

    path = Path(rest).expanduser()
    if not path.is_file():
        raise bad_tokenizer(name, f"no file {rest}")
    return XLlamaTokenizer(path, name=name)


def hf(name: str, rest: str) -> Tokenizer:
    from ctxprobe.tokenizers.hf import HFTokenizer

    path = Path(rest).expanduser()
    if not (path.is_file() or (path / "tokenizer.json").is_file()):
        raise bad_tokenizer(name, f"no tokenizer.json at {rest}")
    return HFTokenizer(path, name=name)


def tiktoken(name: str, rest: str) -> Tokenizer:
    from ctxprobe.tokenizers.tiktoken_tok import ENCODINGS, TiktokenTokenizer

    if rest not in ENCODINGS:
        raise bad_tokenizer(name, f"unknown encoding '{rest}' (offline: {', '.join(ENCODINGS)})")
    return TiktokenTokenizer(rest, name=name)


def approx(name: str, rest: str) -> Tokenizer:
    from ctxprobe.tokenizers.approx import DEFAULT_CHARS_PER_TOKEN, ApproxTokenizer

    try:
        ratio = float(rest) if rest else DEFAULT_CHARS_PER_TOKEN
    except ValueError:
        raise bad_tokenizer(name, "approx takes characters per token, e.g. approx:3.8") from None
    return ApproxTokenizer(ratio, name=name)


def endpoint(name: str, rest: str) -> Tokenizer:
    from urllib.parse import parse_qsl

    from ctxprobe.tokenizers.endpoint import EndpointTokenizer

    url, _, query = rest.partition("?")
    if not url:
        raise bad_tokenizer(name, "bare 'endpoint' needs the model's server: use it with an openai-compat: model")
    opts = dict(parse_qsl(query))
    unknown = set(opts) - {"kind", "model"}
    if unknown:
        raise bad_tokenizer(name, f"unknown endpoint option(s) {sorted(unknown)} (accepted: kind, model)")
    return EndpointTokenizer(url, kind=opts.get("kind"), model=opts.get("model"), name=name)
