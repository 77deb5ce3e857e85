"""Removing API keys from any text we store or show: one place, every provider.

Servers echo keys back in error bodies, whole or masked: ``sk-tes****T123``,
``sk-abc...wxyz``, ``AIza…9xQ``. Replacing only the exact key lets a masked form through
to stderr, the store, exports and HTML. :func:`scrub` therefore removes, for every known
secret (every provider's key variable that is set, plus keys handed to a provider):

- the secret itself;
- any run of at least :data:`MIN_FRAGMENT` characters copied from it (a bare prefix or
  suffix, or a middle slice);
- a masked form: a run of mask characters (``*``, ``•``, ``…``, ``...``, ``#``) with a
  prefix of the secret before it and/or a suffix of it after it, of at least
  :data:`MIN_MASK_PIECE` characters together — the whole token goes;
- the secret split in pieces: slices of it that follow one another in the secret's order,
  joined by separators (spaces, line breaks, quotes, ``+``, ``,``…), :data:`MIN_FRAGMENT`
  characters together, however short each piece (a key wrapped over lines, or quoted in
  chunks);
- a short slice on its own (a whole word of :data:`MIN_SHORT_FRAGMENT`–7 characters) that
  mixes character classes as keys do (``Ab3xY``); a slice of one class only (``48213``,
  ``abcde``, ``ABCDE``) is left alone: such words are answers, variable names and prose;
- and anything shaped like a provider key (``sk-…``, ``AIza…``), masked or not.

:func:`scrub_obj` applies :func:`scrub` to every string of a nested dict/list (run meta).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from typing import Any

#: Environment variables the providers read keys from.
KEY_ENV_VARS: tuple[str, ...] = ("CTXPROBE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
                                 "GOOGLE_API_KEY")
MASK = "***"
#: A slice of a secret this long is the secret's, wherever it appears (7 digits is an answer).
MIN_FRAGMENT = 8
#: Characters of a secret's prefix + suffix around a mask that identify a masked key.
MIN_MASK_PIECE = 4
#: Secrets shorter than this are replaced only whole (a fragment of them says nothing).
MIN_SECRET = 8
#: A whole word this long that is a slice of a secret and mixes character classes is the secret's.
MIN_SHORT_FRAGMENT = 5
#: What may separate the pieces of a split secret.
_SEPARATORS = frozenset(" \t\r\n\"'`,+|\\")
_WORD = re.compile(r"[A-Za-z0-9_\-]+")

_MASKED = re.compile(r"(?P<head>[A-Za-z0-9_\-]*)(?P<mask>(?:[*•#…]|\.{3})+)(?P<tail>[A-Za-z0-9_\-]*)")
_KEYLIKE = re.compile(r"\b(?:sk-[A-Za-z0-9_*•…\-]{6,}|AIza[0-9A-Za-z_\-*•…]{10,})")

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(secret: str | None) -> None:
    """Remember a key handed to a provider directly (not through the environment)."""
    if secret and secret.strip():
        with _lock:
            _registered.add(secret.strip())


def forget_registered_secrets() -> None:
    """Drop every key :func:`register_secret` remembered (a process that ends a session
    with one provider and starts another; tests, so one test's keys never mask another's text)."""
    with _lock:
        _registered.clear()


def known_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """Every secret to scrub: registered keys, keys in the environment, ``extra``."""
    found = {os.environ.get(v, "").strip() for v in KEY_ENV_VARS}
    with _lock:
        found |= _registered
    found |= {s.strip() for s in extra if s and s.strip()}
    return sorted((s for s in found if s), key=len, reverse=True)


def scrub(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` without any known secret, fragment of one, masked form or key-shaped token."""
    if not text:
        return text
    for secret in known_secrets(extra):
        text = text.replace(secret, MASK)
        if len(secret) >= MIN_SECRET:
            text = _scrub_masked(text, secret)
            text = _scrub_fragments(text, secret)
            text = _scrub_pieces(text, secret)
            text = _scrub_short(text, secret)
    return _KEYLIKE.sub(MASK, text)


def scrub_obj(value: Any, extra: Iterable[str | None] = ()) -> Any:
    """:func:`scrub` applied to every string (keys included) of nested dicts, lists and tuples."""
    if isinstance(value, str):
        return scrub(value, extra)
    if isinstance(value, dict):
        return {scrub(k, extra) if isinstance(k, str) else k: scrub_obj(v, extra) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_obj(v, extra) for v in value]
    return value


def _scrub_masked(text: str, secret: str) -> str:
    def replace(m: re.Match[str]) -> str:
        head = _longest_suffix_that_prefixes(m.group("head"), secret)
        tail = _longest_prefix_that_suffixes(m.group("tail"), secret)
        if len(head) + len(tail) < MIN_MASK_PIECE:
            return m.group(0)
        start = m.group("head")[: len(m.group("head")) - len(head)]
        rest = m.group("tail")[len(tail):]
        return start + MASK + rest

    return _MASKED.sub(replace, text)


def _longest_suffix_that_prefixes(head: str, secret: str) -> str:
    """The longest end of ``head`` that is a beginning of ``secret`` (the visible prefix)."""
    for n in range(min(len(head), len(secret)), 0, -1):
        if secret.startswith(head[-n:]):
            return head[-n:]
    return ""


def _longest_prefix_that_suffixes(tail: str, secret: str) -> str:
    """The longest beginning of ``tail`` that is an end of ``secret`` (the visible suffix)."""
    for n in range(min(len(tail), len(secret)), 0, -1):
        if secret.endswith(tail[:n]):
            return tail[:n]
    return ""


def _scrub_fragments(text: str, secret: str) -> str:
    """Replace every maximal run of ``text`` made of ``MIN_FRAGMENT``-long slices of ``secret``."""
    k = MIN_FRAGMENT
    grams = {secret[i:i + k] for i in range(len(secret) - k + 1)}
    covered = [False] * len(text)
    for i in range(len(text) - k + 1):
        if text[i:i + k] in grams:
            for j in range(i, i + k):
                covered[j] = True
    if not any(covered):
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if covered[i]:
            while i < len(text) and covered[i]:
                i += 1
            out.append(MASK)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _scrub_pieces(text: str, secret: str) -> str:
    """The secret split by separators: the text with separators left out is searched for
    ``MIN_FRAGMENT``-long slices, and each covered stretch (separators inside it included)
    of the original text is replaced. Pieces must sit in the secret's own order: they are
    found as one run of the joined text."""
    kept = [i for i, ch in enumerate(text) if ch not in _SEPARATORS]
    if len(kept) == len(text):
        return text  # nothing to join: _scrub_fragments has seen this text as it is
    joined = "".join(text[i] for i in kept)
    k = MIN_FRAGMENT
    grams = {secret[i:i + k] for i in range(len(secret) - k + 1)}
    spans: list[tuple[int, int]] = []
    for j in range(len(joined) - k + 1):
        if joined[j:j + k] in grams:
            start, end = kept[j], kept[j + k - 1] + 1
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            elif spans and all(c in _SEPARATORS for c in text[spans[-1][1]:start]):
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
    for start, end in reversed(spans):
        text = text[:start] + MASK + text[end:]
    return text


def _classes(word: str) -> int:
    return sum((any(c.isdigit() for c in word), any(c.islower() for c in word), any(c.isupper() for c in word)))


def _scrub_short(text: str, secret: str) -> str:
    """Whole words of ``MIN_SHORT_FRAGMENT`` or more characters that are slices of the
    secret and mix at least two of digits, lower case and upper case."""
    def replace(m: re.Match[str]) -> str:
        word = m.group(0)
        if len(word) >= MIN_SHORT_FRAGMENT and word in secret and _classes(word) >= 2:
            return MASK
        return word

    return _WORD.sub(replace, text)
