"""An unknown tokenizer name is a one-line "unknown tokenizer" with a suggestion and the
accepted forms, not "no such file or folder"; a name that is plainly a path keeps that."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers import accepted_forms, resolve_tokenizer


@pytest.mark.parametrize("name, suggestion", [("loacl", "local"), ("aprox", "approx"), ("endpiont", "endpoint"),
                                              ("tiktoken-o200k_base", "tiktoken:o200k_base")])
def test_a_misspelt_form_gets_did_you_mean(name, suggestion) -> None:
    with pytest.raises(CtxprobeError) as err:
        resolve_tokenizer(name)
    assert str(err.value) == f"unknown tokenizer '{name}'; did you mean '{suggestion}'; accepted forms: {accepted_forms()}"


def test_a_name_like_nothing_lists_the_forms() -> None:
    with pytest.raises(CtxprobeError) as err:
        resolve_tokenizer("wordpiece")
    assert str(err.value) == f"unknown tokenizer 'wordpiece'; accepted forms: {accepted_forms()}"
    assert "no such file" not in str(err.value)
    # the providers' counting APIs are named from their declarations, in the same words as before
    assert accepted_forms().endswith("'approx[:CHARS_PER_TOKEN]', 'anthropic-count:MODEL', 'gemini-count:MODEL', "
                                     "'openai-count:MODEL', or a path")


def test_a_hub_id_says_nothing_is_downloaded() -> None:
    with pytest.raises(CtxprobeError, match=r"^unknown tokenizer 'HuggingFaceTB/SmolLM2-135M' \(not a local path; "
                                            r"nothing is downloaded: for a hub model give hf:/path/to/its/folder\); "
                                            r"accepted forms: "):
        resolve_tokenizer("HuggingFaceTB/SmolLM2-135M")


@pytest.mark.parametrize("name", ["./nope/tokenizer.json", "/no/such/folder", "~/missing.gguf", "model.gguf"])
def test_a_missing_path_is_still_no_such_file(name) -> None:
    with pytest.raises(CtxprobeError, match="no such file or folder"):
        resolve_tokenizer(name)


def test_cli_says_it_in_one_line(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "run", "--model", "sim:perfect", "--tokenizer",
                           "loacl", "--lengths", "512", "--store", "s.sqlite"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0 and len(lines) == 1 and "unknown tokenizer 'loacl'; did you mean 'local'" in lines[0]
    assert not (tmp_path / "s.sqlite").exists()
