"""Tokens are not text: two sims whose tokenizers differ in density rank one way in their
own tokens and the other way in words, and the words ranking is the true one."""

from __future__ import annotations

import json

import pytest

from decide_sims import run_sim
from ctxprobe.cli import main

# (model, tokenizer, characters per token): sim/model.py: sim:decay reads correctly up to
# `cliff` prompt tokens as its tokenizer counts them; approx:R counts about one token per R
# characters (tokenizers/approx.py). So A reads ~3,000 x 2 = 6,000 characters, B ~1,500 x 8
# = 12,000: B reads twice as much text, though A's cliff is twice as many of its own tokens.
SIMS = [("sim:decay?cliff=3000&width=1", "approx:2", 2.0), ("sim:decay?cliff=1500&width=1", "approx:8", 8.0)]


def _cliff(model: str) -> int:
    return int(dict(p.split("=") for p in model.split("?", 1)[1].split("&"))["cliff"])


@pytest.fixture(scope="module")
def dense_sparse(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    store = tmp_path_factory.mktemp("density") / "runs.sqlite"
    ids = [run_sim(store, model, "1k,2k,4k", "--tokenizer", tok, "--reps", "10") for model, tok, _ in SIMS]
    return str(store), ids


def _limits(capsys: pytest.CaptureFixture[str], store: str, ids: list[str], unit: str) -> dict[str, int]:
    capsys.readouterr()
    assert main(["decide", *ids, "--store", store, "--unit", unit, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return {lim["model"]: lim["lo"] for lim in out["limits"]}


def test_words_ranking_is_the_true_one(dense_sparse, capsys) -> None:
    store, ids = dense_sparse
    true_chars = {model: _cliff(model) * ratio for model, _, ratio in SIMS}
    truth = sorted(true_chars, key=true_chars.__getitem__, reverse=True)
    tokens = _limits(capsys, store, ids, "tokens")
    words = _limits(capsys, store, ids, "words")
    chars = _limits(capsys, store, ids, "chars")
    by_tokens = sorted(tokens, key=tokens.__getitem__, reverse=True)
    assert by_tokens == list(reversed(truth))  # in their own tokens, the sparse tokenizer's model looks longer
    assert sorted(words, key=words.__getitem__, reverse=True) == truth
    assert sorted(chars, key=chars.__getitem__, reverse=True) == truth
    # every limit is what the stored prompts of the cleared length held, below the sim's true reach
    for model, _, ratio in SIMS:
        assert chars[model] <= _cliff(model) * ratio


def test_a_band_in_words_goes_to_the_model_that_reads_more_text(dense_sparse, capsys) -> None:
    store, ids = dense_sparse
    capsys.readouterr()
    assert main(["decide", *ids, "--store", store, "--unit", "words", "--bands", "1.2k", "--json"]) == 0
    (choice,) = json.loads(capsys.readouterr().out)["choices"]
    assert choice["band"] == 1200 and choice["unit"] == "words"
    assert choice["choice"] == SIMS[1][0]
    # A cleared 2K of its tokens (~700 words) and failed 4K (~1,400): 1,200 words are not shown
    assert {c["model"]: c["meets"] for c in choice["candidates"]}[SIMS[0][0]] == "maybe"
