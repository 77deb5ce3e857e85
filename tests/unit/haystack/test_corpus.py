from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import (
    corpus_sentences,
    filler_source,
    is_clean_sentence,
    split_sentences,
)

# ---------------------------------------------------------------- sanitize


@pytest.mark.parametrize(
    "sentence",
    [
        "The special magic number for brisk-lantern-482 is 4819203.",
        "Call 12345 for help.",
        "The Magic   Number is here.",
        "Keys look like calm-river-7 in the prompt.",
    ],
)
def test_dirty_sentences_are_rejected(sentence: str) -> None:
    assert not is_clean_sentence(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The river ran past the mill in 1984.",  # four digits are fine
        "A well-known tool sat on the bench.",  # one hyphen, no digits
        "The number of geese grew each winter.",  # 'number' alone is not a needle
    ],
)
def test_ordinary_sentences_are_clean(sentence: str) -> None:
    assert is_clean_sentence(sentence)


def test_split_sentences_basic() -> None:
    text = 'First one.  Second\nline here! Third? "Quoted start." lower. case stays'
    assert split_sentences(text) == [
        "First one.",
        "Second line here!",
        "Third?",
        '"Quoted start." lower. case stays',
    ]


def test_split_after_closing_quote_and_drop_empty() -> None:
    assert split_sentences('He said "stop." Then he left.') == [
        'He said "stop."',
        "Then he left.",
    ]
    assert split_sentences("  \n\t ") == []


def test_split_breaks_long_sentences() -> None:
    clause = "the river ran past the old mill and the meadow"
    long = ", ".join([clause] * 30) + "."
    pieces = split_sentences(long)
    assert len(pieces) > 1
    assert all(0 < len(p) <= 400 for p in pieces)
    assert " ".join(pieces) == long  # nothing lost but the boundary spaces
    assert all(p.endswith((",", ".")) for p in pieces)  # cut at commas when possible


def test_split_breaks_at_spaces_and_hard_cuts() -> None:
    words = " ".join(["meadow"] * 200)
    pieces = split_sentences(words)
    assert len(pieces) > 1 and all(len(p) <= 400 for p in pieces)
    assert all(not p.startswith(" ") and "meadow" in p for p in pieces)
    blob = "x" * 1000
    assert split_sentences(blob) == ["x" * 400, "x" * 400, "x" * 200]


# ---------------------------------------------------------------- corpus


def make_corpus(tmp_path: Path, n: int = 30) -> tuple[Path, list[str]]:
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    first = [f"Alpha file line {i} is plain text." for i in range(n)]
    second = [f"Beta file line {i} is markdown text." for i in range(n)]
    (root / "b.txt").write_text(" ".join(first[: n // 2]) + "\n\n" + " ".join(first[n // 2 :]))
    (root / "sub" / "c.md").write_text("# Heading\n\n" + "\n".join(second) + "\n")
    (root / "ignored.csv").write_text("Not read. At all.")
    return root, first + ["Heading"] + second


def test_corpus_reads_txt_and_md_in_sorted_order(tmp_path: Path) -> None:
    root, expected = make_corpus(tmp_path)
    n = len(expected)
    stream = corpus_sentences(root, seed=0)
    got = list(itertools.islice(stream, n))
    start = random.Random(0).randrange(n)
    assert got == expected[start:] + expected[:start]


def test_corpus_cycles(tmp_path: Path) -> None:
    root, expected = make_corpus(tmp_path)
    n = len(expected)
    got = list(itertools.islice(corpus_sentences(root, seed=3), 3 * n))
    assert got[:n] == got[n : 2 * n] == got[2 * n :]
    assert sorted(got[:n]) == sorted(expected)


def test_corpus_seed_offsets_differ_and_repeat(tmp_path: Path) -> None:
    root, expected = make_corpus(tmp_path)
    firsts = {next(corpus_sentences(root, seed=s)) for s in range(20)}
    assert len(firsts) > 5
    assert next(corpus_sentences(root, seed=11)) == next(corpus_sentences(str(root), seed=11))


def test_corpus_drops_dirty_sentences(tmp_path: Path) -> None:
    root = tmp_path / "dirty"
    root.mkdir()
    clean = [f"Clean line {chr(97 + i % 26)} stays in the corpus." for i in range(25)]
    dirty = [
        "The special magic number for brisk-lantern-482 is 4819203.",
        "Her account was 7654321 at the time.",
        "Keys like calm-river-7 must not leak.",
    ]
    (root / "a.txt").write_text(" ".join(clean[:10] + dirty + clean[10:]))
    got = list(itertools.islice(corpus_sentences(root, seed=1), 200))
    assert set(got) == set(clean)
    assert not any("7654321" in s or "4819203" in s for s in got)


def test_corpus_skips_hidden_directories(tmp_path: Path) -> None:
    root, expected = make_corpus(tmp_path)
    (root / ".git").mkdir()
    (root / ".git" / "notes.txt").write_text("Hidden tooling text should not appear.")
    got = set(itertools.islice(corpus_sentences(root, seed=2), 200))
    assert "Hidden tooling text should not appear." not in got
    assert got == set(expected)


def assert_one_line_error(exc: pytest.ExceptionInfo[CtxprobeError], *needles: str) -> None:
    message = str(exc.value)
    assert "\n" not in message and message.strip() == message
    for needle in needles:
        assert needle in message, message


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(CtxprobeError) as exc:
        corpus_sentences(tmp_path / "nope", seed=0)  # raises at the call, not at next()
    assert_one_line_error(exc, "does not exist")


def test_not_a_directory(tmp_path: Path) -> None:
    f = tmp_path / "file.txt"
    f.write_text("Some text.")
    with pytest.raises(CtxprobeError) as exc:
        filler_source(str(f), seed=0)
    assert_one_line_error(exc, "not a directory")


def test_no_text_files(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    with pytest.raises(CtxprobeError) as exc:
        corpus_sentences(tmp_path, seed=0)
    assert_one_line_error(exc, "no readable .txt or .md files")


def test_too_few_sentences(tmp_path: Path) -> None:
    sentences = [f"Line {chr(97 + i)} is short but fine." for i in range(19)]
    sentences.append("This one hides 1234567 so it is dropped.")
    (tmp_path / "small.txt").write_text(" ".join(sentences))
    with pytest.raises(CtxprobeError) as exc:
        corpus_sentences(tmp_path, seed=0)
    assert_one_line_error(exc, "has only 19 usable sentences", "add more text")


def test_path_with_newline_still_gives_one_line(tmp_path: Path) -> None:
    with pytest.raises(CtxprobeError) as exc:
        corpus_sentences(tmp_path / "bad\nname", seed=0)
    assert_one_line_error(exc, "does not exist")


def test_filler_source_directory(tmp_path: Path) -> None:
    root, expected = make_corpus(tmp_path)
    got = list(itertools.islice(filler_source(str(root), 4), 10))
    assert got == list(itertools.islice(corpus_sentences(root, 4), 10))
    assert set(got) <= set(expected)
