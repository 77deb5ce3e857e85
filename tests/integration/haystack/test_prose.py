from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctxprobe.haystack import filler_source, is_clean_sentence, prose_sentences

FORBIDDEN = ("magic", "number", "key", "secret", "code", "answer", "question")


def take(it, n: int) -> list[str]:
    return list(itertools.islice(it, n))


@pytest.fixture(scope="module")
def many() -> list[str]:
    return take(prose_sentences(1234), 20_000)


def test_same_seed_same_stream() -> None:
    assert take(prose_sentences(7), 500) == take(prose_sentences(7), 500)


def test_different_seeds_differ() -> None:
    a, b = take(prose_sentences(1), 200), take(prose_sentences(2), 200)
    assert sum(x == y for x, y in zip(a, b)) < 5


def test_stream_is_the_same_in_another_process_with_other_hash_seed() -> None:
    """Guards against hash()/set-order leaking into the stream."""
    src = str(Path(__file__).resolve().parents[3] / "src")
    code = (
        "import itertools, sys\n"
        "from ctxprobe.haystack import prose_sentences\n"
        "sys.stdout.write('\\n'.join(itertools.islice(prose_sentences(99), 300)))\n"
    )
    env = {**os.environ, "PYTHONPATH": src, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split("\n") == take(prose_sentences(99), 300)


def test_shape_of_every_sentence(many: list[str]) -> None:
    for s in many:
        assert s.isascii(), s
        assert "\n" not in s and "\r" not in s, s
        assert s[0].isupper() and s.endswith("."), s
        assert 8 <= len(s.split()) <= 30, s
        # only the first letter is capitalised: no proper names of any kind
        assert not re.search(r"[A-Z]", s[1:]), s


def test_no_digits_hyphens_or_forbidden_words(many: list[str]) -> None:
    text = " ".join(many)
    assert not re.search(r"\d", text)
    assert "-" not in text
    lowered = text.lower()
    for word in FORBIDDEN:
        assert word not in lowered, word
    assert not re.search(r"\b(lab|labs|works)\b", lowered)  # multihop fact vocabulary


def test_every_sentence_is_clean(many: list[str]) -> None:
    assert all(is_clean_sentence(s) for s in many)


def test_articles_agree(many: list[str]) -> None:
    bad = [
        m.group(0)
        for s in many
        for m in re.finditer(r"\b(?:[Aa] [aeiou]\w*|[Aa]n [^aeiou\s]\w*)", s)
    ]
    assert bad == []


def test_variety(many: list[str]) -> None:
    assert sum(a == b for a, b in zip(many, many[1:])) == 0
    assert len(set(many)) > 0.99 * len(many)
    assert len({s.split()[0] for s in many}) > 40  # many templates, not a handful
    lengths = {len(s.split()) for s in many}
    assert min(lengths) <= 10 and max(lengths) >= 24


def test_filler_source_prose() -> None:
    assert take(filler_source(None, 5), 50) == take(prose_sentences(5), 50)
    assert take(filler_source("prose", 5), 50) == take(prose_sentences(5), 50)
