"""GGUFTokenizer on the embedded SmolLM2 GGUF, checked against llama-cpp-python's own paths."""

from __future__ import annotations

import copy
import re
import sys

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers import Tokenizer, count_many, resolve_tokenizer
from ctxprobe.tokenizers.chat_template import ChatTemplate

from ctxprobe.errors import MissingExtraError
from ctxprobe.tokenizers.gguf import GGUFTokenizer, _load

USER = [{"role": "user", "content": "Which lantern was counted twice?"}]
CONVERSATIONS = [
    USER,
    [{"role": "system", "content": "Be brief."}, *USER],
    [*USER, {"role": "assistant", "content": "The third."}, {"role": "user", "content": "Sure?"}],
]


def test_protocol_and_metadata(gguf_tokenizer: GGUFTokenizer, smollm_gguf_path) -> None:
    assert isinstance(gguf_tokenizer, Tokenizer)
    assert gguf_tokenizer.name == f"gguf:{smollm_gguf_path}"
    assert gguf_tokenizer.trained_context == 8192
    assert gguf_tokenizer.template_source.startswith("gguf metadata")
    assert re.fullmatch(r"[0-9a-f]{16}", gguf_tokenizer.chat_template_hash or "")
    assert (gguf_tokenizer.template.bos_token, gguf_tokenizer.template.eos_token) == (
        "<|im_start|>",
        "<|im_end|>",
    )
    assert gguf_tokenizer.add_bos is False  # tokenizer.ggml.add_bos_token = false


@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_chat_counts(gguf_tokenizer: GGUFTokenizer, messages) -> None:
    ids = gguf_tokenizer.encode_chat(messages)
    assert gguf_tokenizer.count_chat(messages) == len(ids)
    content = sum(gguf_tokenizer.count(m["content"]) for m in messages)
    assert len(ids) > content  # the template's wrappers are counted
    assert gguf_tokenizer.decode(ids) == gguf_tokenizer.render_chat(messages)


@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_encode_chat_matches_llama_cpp_python(gguf_tokenizer: GGUFTokenizer, messages) -> None:
    """Same ids as create_chat_completion: its handler for this GGUF is the Jinja2 formatter."""
    llama_cpp = pytest.importorskip("llama_cpp")
    llm = _load(gguf_tokenizer.path).llama
    assert llm.chat_format == "chat_template.default"
    handler_prompt = llama_cpp.llama_chat_format.Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=gguf_tokenizer.template.eos_token,
        bos_token=gguf_tokenizer.template.bos_token,
    )(messages=messages)
    assert handler_prompt.added_special  # => tokenized with add_bos=False, special=True
    expected = llm.tokenize(handler_prompt.prompt.encode(), add_bos=False, special=True)
    assert gguf_tokenizer.encode_chat(messages) == expected


def _with_template(tok: GGUFTokenizer, source: str, add_bos: bool) -> GGUFTokenizer:
    clone = copy.copy(tok)
    clone.template = ChatTemplate(source, tok.template.bos_token, tok.template.eos_token)
    clone.add_bos = add_bos
    return clone


def test_bos_added_once_when_the_vocab_wants_it(gguf_tokenizer: GGUFTokenizer) -> None:
    bos = gguf_tokenizer.bos_id
    body = "{{ messages[0]['content'] }}"
    without_bos = _with_template(gguf_tokenizer, body, add_bos=True).encode_chat(USER)
    with_bos = _with_template(gguf_tokenizer, "{{ bos_token }}" + body, add_bos=True).encode_chat(USER)
    assert without_bos[0] == bos and without_bos[1] != bos
    assert with_bos == without_bos  # template's own BOS is not doubled
    assert _with_template(gguf_tokenizer, body, add_bos=False).encode_chat(USER)[0] != bos


def test_plain_encode_and_counts(gguf_tokenizer: GGUFTokenizer, make_sentences) -> None:
    assert len(gguf_tokenizer.encode("<|im_end|>")) > 1  # special text stays text
    assert gguf_tokenizer.encode("") == [] and gguf_tokenizer.count("") == 0
    texts = [" " + s for s in make_sentences(50, seed=3)] + ["", "x" * 20000, "日本語 🙂"]
    counts = gguf_tokenizer.count_many(texts)
    assert counts == [len(gguf_tokenizer.encode(t)) for t in texts]
    assert counts == [gguf_tokenizer.count(t) for t in texts] == count_many(gguf_tokenizer, texts)
    llm = _load(gguf_tokenizer.path).llama
    assert gguf_tokenizer.encode(texts[0]) == llm.tokenize(texts[0].encode(), add_bos=False, special=False)


def test_additivity_of_space_prefixed_sentences(gguf_tokenizer: GGUFTokenizer, make_sentences) -> None:
    """Exact-count sizing rests on this: counts of ' ' + sentence add up to the count of the joined text."""
    sentences = make_sentences(400, seed=11)
    pieces = [sentences[0]] + [" " + s for s in sentences[1:]]
    joined = " ".join(sentences)
    assert sum(gguf_tokenizer.count_many(pieces)) == gguf_tokenizer.count(joined)
    # Stronger: the ids themselves concatenate, so token positions can be added up too.
    assert [i for p in pieces for i in gguf_tokenizer.encode(p)] == gguf_tokenizer.encode(joined)
    # Bare sentences give other ids ("The" vs " The"), so the space must be counted with them.
    assert [i for s in sentences for i in gguf_tokenizer.encode(s)] != gguf_tokenizer.encode(joined)
    # Also inside the SmolLM2 chat prompt: wrapper + content counts add up.
    empty = gguf_tokenizer.count_chat([{"role": "user", "content": ""}])
    full = gguf_tokenizer.count_chat([{"role": "user", "content": joined}])
    assert full == empty + gguf_tokenizer.count(joined)


def test_loading_is_cached_per_path(gguf_tokenizer: GGUFTokenizer, smollm_gguf_path) -> None:
    assert _load(smollm_gguf_path) is _load(smollm_gguf_path)
    again = GGUFTokenizer(str(smollm_gguf_path))
    assert again._keepalive is gguf_tokenizer._keepalive


def test_resolve_local_and_paths(gguf_tokenizer: GGUFTokenizer, smollm_gguf_path) -> None:
    local = resolve_tokenizer("local")
    assert isinstance(local, GGUFTokenizer) and local.name == "local"
    assert resolve_tokenizer("local") is local
    assert isinstance(resolve_tokenizer(f"gguf:{smollm_gguf_path}"), GGUFTokenizer)
    assert isinstance(resolve_tokenizer(str(smollm_gguf_path)), GGUFTokenizer)


def test_missing_llama_cpp_names_the_extra(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import now raises ImportError
    with pytest.raises(MissingExtraError, match=r"ctxprobe\[local\]"):
        GGUFTokenizer(tmp_path / "never-loaded.gguf")


def test_unreadable_gguf_is_one_line(gguf_tokenizer: GGUFTokenizer, tmp_path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file at all")
    with pytest.raises(CtxprobeError) as info:
        resolve_tokenizer(f"gguf:{bad}")
    assert "\n" not in str(info.value)


def test_no_template_and_add_bos_variant(gguf_tokenizer: GGUFTokenizer, bos_variant_gguf) -> None:
    """A GGUF without a template and with add_bos_token=true: ChatML fallback, BOS once.

    llama.cpp's server does the same (strip a leading BOS text, tokenize with add_special);
    llama-cpp-python's ``Llama.tokenize(add_bos=True, special=True)`` gives these ids too.
    """
    tok = GGUFTokenizer(bos_variant_gguf)
    assert tok.template_source.startswith("ChatML fallback")
    assert tok.add_bos and tok.template.bos_token == "<|endoftext|>" and tok.bos_id == 0
    rendered = tok.render_chat(USER)
    assert rendered.startswith("<|im_start|>user\n")
    ids = tok.encode_chat(USER)
    llm = _load(bos_variant_gguf).llama
    assert ids == llm.tokenize(rendered.encode(), add_bos=True, special=True)
    assert ids[0] == 0 and ids[1] == 1 and ids.count(0) == 1
    doubled = _with_template(tok, "{{ bos_token }}{{ messages[0]['content'] }}", add_bos=True)
    assert doubled.encode_chat(USER).count(0) == 1


def test_count_segments_equals_count_many_on_random_text(gguf_tokenizer: GGUFTokenizer, make_sentences) -> None:
    """One llama.cpp call over many texts, tokens attributed by bytes: the same counts as
    one call per text, including texts ending in whitespace, empty texts, digits, emoji,
    and texts a token would straddle (those are recounted alone)."""
    import random

    rnd = random.Random(5)
    odd = ["".join(rnd.choice("ab c.\n'1é😀\t") for _ in range(rnd.randrange(0, 8))) for _ in range(4000)]
    words = sorted({" " + w for s in make_sentences(300, seed=4) for w in s.split(" ")})
    for texts in (odd, words, ["12", "34", " 5", "6 ", "\n", "x"] * 3):
        assert gguf_tokenizer.count_segments(texts) == gguf_tokenizer.count_many(texts)
