"""A tools layout (docs/layouts.md) counted through llama.cpp's own server: the embedded
SmolLM2 GGUF loaded with a jinja chat template that renders tool calls, results and the
declaration (Qwen2.5's, :data:`QWEN_TOOLS_TEMPLATE`), counted by ``/apply-template`` with
``tools`` + ``/tokenize`` — the count must be the prompt_tokens llama.cpp's chat route
reports for the same messages and tools. The GGUF's own template drops the calls: that one
is refused in one line."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from ctxprobe.cases.families import make_labelled
from ctxprobe.core.case import Cell
from ctxprobe.core.tools import READ_TOOL, check_renders_tools
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.spec import PromptLayout
from ctxprobe.tokenizers import resolve_tokenizer
from ctxprobe.tokenizers.endpoint import EndpointTokenizer

from tokenizer_fixtures import QWEN_TOOLS_TEMPLATE

pytestmark = pytest.mark.slow


def test_a_tools_case_counts_what_llama_cpp_serves(smollm_gguf_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    from ctxprobe.embedded.xllama import Engine, EngineConfig

    engine = Engine(EngineConfig(path=smollm_gguf_path, n_ctx=2048, n_threads=2, chat_template=QWEN_TOOLS_TEMPLATE))
    try:
        tok = EndpointTokenizer(engine.base_url, kind="llama-server", name="gguf+tools-template")
        check_renders_tools(tok)  # the probe's call, result and declaration all rendered by the server
        fam, params = make_labelled("niah", {}, BuildContext(tok, None, PromptLayout(messages="tools", turn_tokens=300)))
        case = fam.generate(Cell("niah", 1024, 0.3), 0, seed=5, params=params)
        assert sum(1 for m in case.messages if m["role"] == "tool") >= 2
        counted = tok.count_chat(case.messages)
        assert 0 <= 1024 - counted <= fill_tolerance(1024)
        reply = httpx.post(f"{engine.base_url}/v1/chat/completions", timeout=300, json={
            "messages": case.messages, "tools": [READ_TOOL], "max_tokens": 1, "temperature": 0}).json()
        assert reply["usage"]["prompt_tokens"] == counted
        # without the declaration the server would read fewer tokens: the count includes it
        bare = httpx.post(f"{engine.base_url}/apply-template", json={"messages": case.messages}).json()["prompt"]
        assert len(tok.encode(bare)) < counted
    finally:
        engine.close()
    with pytest.raises(CtxprobeError, match="drops the tool call") as err:
        check_renders_tools(resolve_tokenizer(f"gguf:{smollm_gguf_path}"))  # SmolLM2's own template
    assert "\n" not in str(err.value)
