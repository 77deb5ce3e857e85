"""An answer prefix (trailing assistant message) renders as transformers renders it with
``continue_final_message=True`` — what vLLM and SGLang apply when ctxprobe sends that flag —
and as RULER builds its input: the chat template with the generation prompt, then the prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.tokenizers import resolve_tokenizer

CHAT = [{"role": "user", "content": "Some special magic numbers are hidden.\nWhat are they?"},
        {"role": "assistant", "content": " The special magic numbers for x mentioned in the provided text are"}]


@pytest.mark.parametrize("prefix", [CHAT[1]["content"], " Answer: they are: "])  # vt's ends with a space
def test_prefix_matches_transformers_continue_final_message(hf_smollm_dir: Path, prefix: str) -> None:
    transformers = pytest.importorskip("transformers")
    hf = transformers.PreTrainedTokenizerFast.from_pretrained(str(hf_smollm_dir))
    chat = [CHAT[0], {"role": "assistant", "content": prefix}]
    theirs = hf.apply_chat_template(chat, tokenize=False, continue_final_message=True)
    ours = resolve_tokenizer(f"hf:{hf_smollm_dir}")
    assert ours.render_chat(chat) == ours.render_chat(CHAT[:1]) + prefix
    assert ours.render_chat(chat) == theirs
    local = resolve_tokenizer("local")  # the same template from the GGUF
    assert local.render_chat(chat) == theirs
