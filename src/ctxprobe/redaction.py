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
- and anything shaped like a provider key (``sk-…``, ``AIza…``), masked or not.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable

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

_MASKED = re.compile(r"(?P<head>[A-Za-z0-9_\-]*)(?P<mask>(?:[*•#…]|\.{3})+)(?P<tail>[A-Za-z0-9_\-]*)")
_KEYLIKE = re.compile(r"\b(?:sk-[A-Za-z0-9_*•…\-]{6,}|AIza[0-9A-Za-z_\-*•…]{10,})")

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(secret: str | None) -> None:
    """Remember a key handed to a provider directly (not through the environment)."""
    if secret and secret.strip():
        with _lock:
            _registered.add(secret.strip())


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
    return _KEYLIKE.sub(MASK, text)


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
