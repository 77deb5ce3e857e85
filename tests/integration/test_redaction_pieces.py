"""A key split in pieces shorter than 8 characters, or a short slice of it shown alone, is
still the key's; and run metadata is scrubbed before it reaches the store (and when read)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ctxprobe.redaction import MASK, MIN_SHORT_FRAGMENT, scrub, scrub_obj
from ctxprobe.store import Store

# key-shaped like a real project key (not a live one)
KEY = "sk-proj-Q7vT2mXa9LpW4eRt8YzK3nBc6HdF1sGu"


def _pieces(key: str, size: int) -> list[str]:
    return [key[i:i + size] for i in range(0, len(key), size)]


@pytest.mark.parametrize("size", [2, 3, 5, 7])
@pytest.mark.parametrize("sep", [" ", "\n", '" + "', ", ", "\t"])
def test_a_key_split_in_short_pieces_is_scrubbed(size, sep) -> None:
    split = sep.join(_pieces(KEY, size))
    out = scrub(f"the server said: {split} (invalid)", (KEY,))
    assert out == f"the server said: {MASK} (invalid)"
    assert all(p not in out for p in _pieces(KEY, size) if len(p) >= 3)


def test_pieces_out_of_order_or_too_few_are_left() -> None:
    pieces = _pieces(KEY[8:], 4)  # no key-shaped prefix left
    assert scrub(" ".join(reversed(pieces[:2])), (KEY,)) == " ".join(reversed(pieces[:2]))
    # 7 characters of the key in two pieces: below MIN_FRAGMENT together (and each piece of
    # one class or too short on its own)
    assert scrub("Q7vT 2mX", (KEY,)) == "Q7vT 2mX"
    assert scrub("Q7vT 2mXa", (KEY,)) == MASK


def test_a_short_slice_alone_is_scrubbed_when_it_mixes_classes() -> None:
    n = MIN_SHORT_FRAGMENT
    assert scrub(f"ends with {KEY[-n:]}.", (KEY,)) == f"ends with {MASK}."  # 5 chars, mixed
    assert scrub(f"ends with {KEY[-(n - 1):]}.", (KEY,)) == f"ends with {KEY[-(n - 1):]}."  # 4: left
    # slices of one class are answers, names and prose: left alone
    digits = "sk-test-abc-4829173-xyz"
    assert scrub("the code is 48291", (digits,)) == "the code is 48291"
    assert scrub("VAR ABCDE = 12345", ("sk-ABCDE-aaaaaaaa",)) == "VAR ABCDE = 12345"
    # only whole words: a slice inside a longer word is left
    assert scrub(f"x{KEY[-n:]}x", (KEY,)) == f"x{KEY[-n:]}x"


def test_scrub_obj_walks_nested_meta() -> None:
    meta = {"note": f"key {KEY}", "list": [KEY[:10] + " " + KEY[10:]], KEY: 1, "n": 3}
    out = scrub_obj(meta, (KEY,))
    assert KEY not in json.dumps(out) and out["n"] == 3 and out["note"] == f"key {MASK}"


def test_run_meta_never_stores_the_key(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CTXPROBE_API_KEY", KEY)
    path = tmp_path / "s.sqlite"
    pieces = " ".join(_pieces(KEY, 6))
    with Store(path) as store:
        store.ensure_run("r1", model="m", tokenizer="t", family="niah", version="0", spec={},
                         meta={"preflight": f"401 from server: {KEY}", "served": {"note": pieces}})
        store.update_run("r1", meta={"error": f"bad key {KEY[:12]}...{KEY[-4:]}", "tail": KEY[-5:]})
        run = store.require_run("r1")
    raw = sqlite3.connect(path).execute("SELECT meta_json FROM runs").fetchone()[0]
    for text in (raw, json.dumps(run.meta.to_json())):
        assert KEY not in text and KEY[-5:] not in text
        assert all(p not in text for p in _pieces(KEY, 6)[1:])
    assert run.meta.extra["preflight"] == f"401 from server: {MASK}"  # not a probe report: kept as stored
