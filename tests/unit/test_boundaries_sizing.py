"""The window rule at its edge: a length whose prompt plus output budget is exactly the
model's window runs; one token more is refused before anything is sent (README: length
+ max output tokens must fit the window unless --allow-beyond-window)."""

from __future__ import annotations

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.spec import make_spec
from ctxprobe.cases.families import build_families
from ctxprobe.sweep.run import check_lengths
from ctxprobe.haystack.context import BuildContext
from ctxprobe.tokenizers import resolve_tokenizer

WINDOW, OUT = 2048, 48


@pytest.fixture(scope="module")
def tok():
    return resolve_tokenizer("local")


def _check(tok, length: int, **extra) -> None:
    spec = make_spec({"model": f"sim:perfect?ctx={WINDOW}", "tokenizer": "local", "lengths": [length],
                      "depths": [0.5], "decoding": {"max_tokens": OUT}, **extra})
    provider = resolve_provider(spec.model, tok)
    assert provider.context_window == WINDOW
    check_lengths(spec, provider, build_families(spec, BuildContext(tokenizer=tok, haystack=None)))


def test_prompt_plus_output_exactly_the_window_runs(tok) -> None:
    _check(tok, WINDOW - OUT)


def test_one_token_past_the_window_is_refused(tok) -> None:
    with pytest.raises(CtxprobeError, match="--allow-beyond-window") as info:
        _check(tok, WINDOW - OUT + 1)
    assert f"length {WINDOW - OUT + 1:,} + {OUT} output tokens exceeds" in str(info.value)
    _check(tok, WINDOW - OUT + 1, allow_beyond_window=True)  # asked for: allowed
