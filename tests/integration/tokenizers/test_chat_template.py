"""Chat templates render as llama.cpp's own template engine renders them; the rules of
our sandboxed jinja2 environment (errors, immutability, filters, extensions)."""

from __future__ import annotations

import re

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers.chat_template import (
    CHATML_TEMPLATE,
    ChatTemplate,
    compile_template,
    render_chat_template,
    template_hash,
)

CONVERSATIONS = [
    [{"role": "user", "content": "Where is the ledger?"}],
    [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Hi"}],
    [
        {"role": "user", "content": "First question, with ünïcode and 42."},
        {"role": "assistant", "content": "An answer."},
        {"role": "user", "content": "A follow-up\nover two lines."},
    ],
]


@pytest.fixture(scope="module")
def llama_cpp(smollm_gguf_path):  # type: ignore[no-untyped-def]
    """llama.cpp's native server in process (xllamacpp) on the embedded GGUF: its
    ``/apply-template`` renders the GGUF's template with llama.cpp's own engine."""
    pytest.importorskip("xllamacpp")
    from ctxprobe.tokenizers.xllama import XLlamaTokenizer

    tokenizer = XLlamaTokenizer(smollm_gguf_path)
    yield tokenizer
    tokenizer.close()


@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_smollm2_render_matches_llama_cpp(smollm_gguf_fields, llama_cpp, messages) -> None:  # type: ignore[no-untyped-def]
    tokens = smollm_gguf_fields["tokenizer.ggml.tokens"].contents()
    source = smollm_gguf_fields["tokenizer.chat_template"].contents()
    bos = tokens[smollm_gguf_fields["tokenizer.ggml.bos_token_id"].contents()]
    eos = tokens[smollm_gguf_fields["tokenizer.ggml.eos_token_id"].contents()]
    theirs = llama_cpp.render_chat(messages)
    ours = render_chat_template(source, messages, bos_token=bos, eos_token=eos)
    assert ours == theirs
    assert ours.endswith("<|im_start|>assistant\n")
    # the template's default system prompt appears only when the chat has none
    assert ("SmolLM" in ours) == (messages[0]["role"] != "system")


def test_chatml_fallback_shape() -> None:
    out = render_chat_template(CHATML_TEMPLATE, [{"role": "user", "content": "hi"}])
    assert out == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    no_prompt = render_chat_template(
        CHATML_TEMPLATE, [{"role": "user", "content": "hi"}], add_generation_prompt=False
    )
    assert no_prompt == "<|im_start|>user\nhi<|im_end|>\n"


def test_raise_exception_surfaces_as_ctxprobe_error() -> None:
    source = (
        "{% if messages[0]['role'] != 'user' %}"
        "{{ raise_exception('Conversation roles must\nalternate user/assistant') }}"
        "{% endif %}{{ messages[0]['content'] }}"
    )
    with pytest.raises(CtxprobeError) as info:
        render_chat_template(source, [{"role": "system", "content": "x"}])
    message = str(info.value)
    assert "Conversation roles must alternate user/assistant" in message
    assert "\n" not in message
    assert render_chat_template(source, [{"role": "user", "content": "ok"}]) == "ok"


def test_syntax_and_runtime_errors_are_one_line() -> None:
    with pytest.raises(CtxprobeError) as info:
        compile_template("{% for m in messages %}{{ m }")
    assert "\n" not in str(info.value)
    with pytest.raises(CtxprobeError) as info:
        render_chat_template("{{ messages[0]['content'] + 1 }}", [{"role": "u", "content": "x"}])
    assert "\n" not in str(info.value)


def test_sandbox_is_immutable() -> None:
    with pytest.raises(CtxprobeError):
        render_chat_template("{{ messages.append(1) }}", [])


def test_tojson_keeps_unicode_and_indents() -> None:
    msgs = [{"role": "user", "content": "café <b> 日本"}]
    out = render_chat_template("{{ messages[0] | tojson }}", msgs)
    assert out == '{"role": "user", "content": "café <b> 日本"}'
    indented = render_chat_template("{{ messages[0] | tojson(indent=2) }}", msgs)
    assert indented.startswith('{\n  "role": "user"')


def test_trim_and_lstrip_blocks() -> None:
    source = "{% for m in messages %}\n    {% if m['role'] == 'user' %}\nU:{{ m['content'] }}\n    {% endif %}\n{% endfor %}"
    msgs = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert render_chat_template(source, msgs) == "U:a\nU:b\n"


def test_loopcontrols_strftime_and_generation_tag() -> None:
    source = (
        "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}"
        "{% generation %}{{ m['content'] }}{% endgeneration %}{% endfor %}|{{ strftime_now('%Y') }}"
    )
    out = render_chat_template(source, [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}])
    assert re.fullmatch(r"one\|\d{4}", out)


def test_special_tokens_and_tools_are_passed() -> None:
    source = "{{ bos_token }}{{ messages[0]['content'] }}{{ eos_token }}{{ tools is none }}"
    out = render_chat_template(source, [{"role": "user", "content": "x"}], bos_token="<s>", eos_token="</s>")
    assert out == "<s>x</s>True"


def test_template_hash_and_cache() -> None:
    h = template_hash(CHATML_TEMPLATE)
    assert re.fullmatch(r"[0-9a-f]{16}", h)
    assert h == template_hash(CHATML_TEMPLATE) != template_hash(CHATML_TEMPLATE + " ")
    assert compile_template(CHATML_TEMPLATE) is compile_template(CHATML_TEMPLATE)
    assert ChatTemplate(CHATML_TEMPLATE).hash == h
