"""HFTokenizer on a real tokenizer.json built from the embedded SmolLM2 GGUF (see conftest)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.errors import CtxprobeError, MissingExtraError
from ctxprobe.tokenizers import resolve_tokenizer

pytest.importorskip("tokenizers")

from ctxprobe.tokenizers.hf import HFTokenizer  # noqa: E402

USER = [{"role": "user", "content": "Which lantern was counted twice?"}]


def _copy(src: Path, dst: Path, config: dict | None = None) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "tokenizer.json", dst / "tokenizer.json")
    if config is not None:
        (dst / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return dst


@pytest.fixture(scope="module")
def hf(hf_smollm_dir: Path) -> HFTokenizer:
    return HFTokenizer(hf_smollm_dir)


def test_chat_counts(hf: HFTokenizer) -> None:
    ids = hf.encode_chat(USER)
    assert hf.count_chat(USER) == len(ids)
    assert len(ids) > hf.count(USER[0]["content"])  # the template adds tokens
    assert hf.decode(ids) == hf.render_chat(USER)
    assert ids[0] == hf.encode_chat(USER)[0] == 1  # <|im_start|> as one special id


def test_plain_encode_does_not_parse_special_tokens(hf: HFTokenizer) -> None:
    assert len(hf.encode("<|im_end|>")) > 1
    assert hf.count_many(["a b", " c", "<|im_end|>"]) == [hf.count(t) for t in ["a b", " c", "<|im_end|>"]]


def test_metadata(hf: HFTokenizer, hf_smollm_dir: Path) -> None:
    assert hf.name == f"hf:{hf_smollm_dir}"
    assert hf.trained_context == 8192  # config.json max_position_embeddings
    assert hf.template is not None
    assert (hf.template.bos_token, hf.template.eos_token) == ("<|im_start|>", "<|im_end|>")
    assert hf.chat_template_hash is not None and len(hf.chat_template_hash) == 16


def test_list_form_chat_template(hf_smollm_dir: Path, tmp_path: Path) -> None:
    config = {"chat_template": [
        {"name": "tool_use", "template": "TOOLS {{ messages[0]['content'] }}"},
        {"name": "default", "template": "[{{ bos_token }}]{{ messages[0]['content'] }}"},
    ], "bos_token": {"content": "<|im_start|>"}, "model_max_length": 2048}
    tok = HFTokenizer(_copy(hf_smollm_dir, tmp_path / "d", config))
    assert tok.render_chat(USER) == "[<|im_start|>]" + USER[0]["content"]
    assert tok.trained_context == 2048  # no config.json: model_max_length is used


def test_list_without_default_is_one_line_error(hf_smollm_dir: Path, tmp_path: Path) -> None:
    config = {"chat_template": [{"name": "rag", "template": "x"}]}
    with pytest.raises(CtxprobeError) as info:
        HFTokenizer(_copy(hf_smollm_dir, tmp_path / "d", config))
    assert "default" in str(info.value) and "\n" not in str(info.value)


def test_jinja_file_wins_and_file_path_accepted(hf_smollm_dir: Path, tmp_path: Path) -> None:
    d = _copy(hf_smollm_dir, tmp_path / "d", {"chat_template": "from config"})
    (d / "chat_template.jinja").write_text("from file {{ messages | length }}")
    assert HFTokenizer(d / "tokenizer.json").render_chat(USER) == "from file 1"


def test_missing_template_is_actionable(hf_smollm_dir: Path, tmp_path: Path) -> None:
    tok = HFTokenizer(_copy(hf_smollm_dir, tmp_path / "d", {"model_max_length": 1e30}))
    assert tok.chat_template_hash is None and tok.trained_context is None
    assert tok.count("plain text still works") > 0
    with pytest.raises(CtxprobeError) as info:
        tok.count_chat(USER)
    assert "chat_template.jinja" in str(info.value) and "\n" not in str(info.value)


def test_missing_tokenizers_names_the_extra(hf_smollm_dir: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(MissingExtraError, match=r"ctxprobe\[hf\]"):
        HFTokenizer(hf_smollm_dir)


def test_resolve_hf_forms(hf_smollm_dir: Path) -> None:
    by_scheme = resolve_tokenizer(f"hf:{hf_smollm_dir}")
    assert isinstance(by_scheme, HFTokenizer)
    assert resolve_tokenizer(f"hf:{hf_smollm_dir}") is by_scheme  # cached by name
    assert isinstance(resolve_tokenizer(str(hf_smollm_dir)), HFTokenizer)
    assert isinstance(resolve_tokenizer(str(hf_smollm_dir / "tokenizer.json")), HFTokenizer)


@pytest.mark.parametrize("name", ["hf:/nonexistent/dir", "tiktoken:cl100k", "/no/such/file.gguf", ""])
def test_resolve_errors_are_one_line(name: str) -> None:
    with pytest.raises(CtxprobeError) as info:
        resolve_tokenizer(name)
    message = str(info.value)
    assert "\n" not in message and "gguf:" in message and "local" in message


def test_agrees_with_llama_cpp(hf: HFTokenizer, gguf_tokenizer, make_sentences, tricky_texts) -> None:
    """The converted tokenizer.json gives llama.cpp's ids, text by text and for chat prompts."""
    # Prose, stress strings, and Python source (40 of this package's own files, spread over it:
    # all of them grew to 300+, 13 s a run) as code text.
    files = sorted(Path(ctxprobe.__file__).parent.rglob("*.py"))
    code = [p.read_text(encoding="utf-8") for p in files[:: max(1, len(files) // 40)]]
    texts = make_sentences(600, seed=7) + tricky_texts + code
    mismatched = [t for t in texts if hf.encode(t) != gguf_tokenizer.encode(t)]
    assert mismatched == []
    prose = " ".join(texts)
    assert hf.encode(prose) == gguf_tokenizer.encode(prose)
    for messages in (USER, [{"role": "system", "content": "Be brief."}, *USER]):
        assert hf.encode_chat(messages) == gguf_tokenizer.encode_chat(messages)
