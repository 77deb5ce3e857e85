"""Haystack files that are not text are refused with one line naming them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import corpus_sentences
from ctxprobe.haystack.corpus import MAX_INVALID_SHARE, invalid_utf8_bytes, not_text_reason

PROSE = " ".join(f"The quiet harbour number {w} stayed calm while the boats rested near the wall."
                 for w in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                           "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
                           "eighteen", "nineteen", "twenty", "thirty", "forty"))


def _with_invalid(n_bad: int, size: int = 2000) -> bytes:
    """``size`` bytes of prose of which exactly ``n_bad`` are not UTF-8 (lone 0xff bytes)."""
    good = (PROSE.encode() * 3)[: size - n_bad]
    step = max(1, len(good) // (n_bad + 1))
    out = bytearray()
    for i in range(n_bad):
        out += good[i * step:(i + 1) * step] + b"\xff"
    out += good[n_bad * step:]
    assert len(out) == size and invalid_utf8_bytes(bytes(out)) == n_bad
    return bytes(out)


def test_invalid_share_boundary() -> None:
    limit = int(MAX_INVALID_SHARE * 2000)  # 20 of 2,000 bytes
    assert not_text_reason(_with_invalid(limit)) is None
    assert "not UTF-8" in (not_text_reason(_with_invalid(limit + 1)) or "")
    assert "NUL" in (not_text_reason(b"plain text\x00more") or "")
    assert not_text_reason("héllo wörld — fine".encode()) is None  # multi-byte UTF-8 is text


def test_binary_and_mostly_invalid_files_are_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text(PROSE)
    (tmp_path / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (tmp_path / "latin1.txt").write_bytes(_with_invalid(100))
    with pytest.raises(CtxprobeError) as info:
        corpus_sentences(tmp_path, seed=0)
    message = str(info.value)
    assert "\n" not in message and "'image.md' contains NUL bytes" in message and "'latin1.txt'" in message
    assert "good.txt" not in message


def test_a_few_bad_bytes_are_tolerated_but_never_reach_a_prompt(tmp_path: Path) -> None:
    (tmp_path / "almost.txt").write_bytes(_with_invalid(3))
    (tmp_path / "more.txt").write_text(PROSE)
    sentences = corpus_sentences(tmp_path, seed=0)
    seen = [next(sentences) for _ in range(60)]
    assert all("\ufffd" not in s and "\x00" not in s for s in seen)


def test_run_with_a_binary_haystack_is_one_line_and_writes_nothing(tmp_path: Path, capsys) -> None:
    hay = tmp_path / "hay"
    hay.mkdir()
    (hay / "notes.txt").write_text(PROSE)
    (hay / "dump.txt").write_bytes(b"\x00\x01\x02" * 200)
    store = tmp_path / "s.sqlite"
    code = main(["run", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "1k", "--depths", "0.5",
                 "--reps", "1", "--haystack", str(hay), "--store", str(store), "--no-progress", "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and "'dump.txt' contains NUL bytes" in err and "Traceback" not in err
    assert not store.exists()
