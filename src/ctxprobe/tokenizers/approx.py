"""``approx[:CHARS_PER_TOKEN]``: a character-ratio counter for when no real tokenizer exists.

Counting characters drifts by tens of percent between tokenizers, so this is the last
resort: ``is_approximate`` is True and :data:`WARNING` is what the sweep should print. It
gets better as the run goes: every response reports the prompt tokens the server counted,
and :meth:`ApproxTokenizer.observe` folds those into the ratio (all observations pooled,
so one odd prompt cannot swing it), replacing the initial guess (default 4 characters per
token, OpenAI's rule of thumb for English) once real counts arrive.

Chat prompts add :data:`TOKENS_PER_MESSAGE` per message plus :data:`REPLY_PRIMER` — the
OpenAI framing, a reasonable prior for other chat formats; its error is absorbed by the
calibration since observations are made on whole chat prompts.

Ids are synthetic (a hash of each ``chars_per_token``-sized chunk): they exist so callers
that need ids of the right length work, and they are stable for a given ratio, but they
mean nothing to any model — in-process providers must not be fed them.
"""

from __future__ import annotations

import math
import threading
import zlib

from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers.base import Message, TokenizerBase, fold_prefill

DEFAULT_CHARS_PER_TOKEN = 4.0
TOKENS_PER_MESSAGE = 3
REPLY_PRIMER = 3
#: How many characters of observed prompts outweigh the prior: one 8K-char prompt.
_PRIOR_WEIGHT_CHARS = 8_000.0

WARNING = (
    "tokenizer '{name}' is APPROXIMATE ({ratio:.2f} characters per token): lengths may be off by "
    "tens of percent until server-reported counts recalibrate it; name an exact tokenizer with "
    "--tokenizer (hf:/path, gguf:/path, tiktoken:o200k_base, endpoint:URL) when you can"
)


def _render(messages: list[Message]) -> str:
    return "".join(f"{m['role']}: {m['content']}\n" for m in messages)


class ApproxTokenizer(TokenizerBase):
    """Characters ÷ ratio; see the module docstring. Thread-safe."""

    is_approximate = True

    def __init__(self, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN, name: str | None = None) -> None:
        if not (0.5 <= chars_per_token <= 20):
            raise CtxprobeError(f"approx:{chars_per_token:g}: characters per token must be between 0.5 and 20")
        self.name = name or f"approx:{chars_per_token:g}"
        self.prior = float(chars_per_token)
        self._chars = 0.0  # observed characters (content, framing excluded)
        self._tokens = 0.0  # observed tokens, framing excluded
        self._n = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ApproxTokenizer({self.name!r}, ratio={self.chars_per_token:.3f})"

    @property
    def chars_per_token(self) -> float:
        """The prior blended with every observation, weighted by characters seen."""
        with self._lock:
            if self._tokens <= 0:
                return self.prior
            prior_tokens = _PRIOR_WEIGHT_CHARS / self.prior
            return (self._chars + _PRIOR_WEIGHT_CHARS) / (self._tokens + prior_tokens)

    @property
    def observations(self) -> int:
        """How many server-reported counts have been folded in."""
        return self._n

    @property
    def warning(self) -> str:
        """The loud notice the sweep prints before it starts."""
        return WARNING.format(name=self.name, ratio=self.chars_per_token)

    def observe(self, text_or_messages: str | list[Message], reported_tokens: int) -> None:
        """Recalibrate from a prompt and the token count the server reported for it."""
        if reported_tokens <= 0:
            return
        if isinstance(text_or_messages, str):
            chars, framing = len(text_or_messages), 0
        else:
            chars = len(_render(text_or_messages))
            framing = TOKENS_PER_MESSAGE * len(text_or_messages) + REPLY_PRIMER
        tokens = reported_tokens - framing
        if chars <= 0 or tokens <= 0:
            return
        with self._lock:
            self._chars += chars
            self._tokens += tokens
            self._n += 1

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token) if text else 0

    def count_many(self, texts: list[str]) -> list[int]:
        ratio = self.chars_per_token
        return [math.ceil(len(t) / ratio) if t else 0 for t in texts]

    def encode(self, text: str) -> list[int]:
        """Synthetic ids, ``count(text)`` of them (see module docstring)."""
        n = self.count(text)
        if n == 0:
            return []
        step = len(text) / n
        bounds = [round(i * step) for i in range(n + 1)]
        return [zlib.crc32(text[bounds[i]:bounds[i + 1]].encode("utf-8")) % 100_000 for i in range(n)]

    # Hosted APIs take no prefill: an answer prefix is counted inside the user turn, where
    # their providers send it (fold_prefill).
    def render_chat(self, messages: list[Message]) -> str:
        return _render(fold_prefill(messages))

    def encode_chat(self, messages: list[Message]) -> list[int]:
        ids: list[int] = []
        for m in fold_prefill(messages):
            ids += [100_001, *self.encode(f"{m['role']}: {m['content']}\n"), 100_002]
            ids += [100_003] * (TOKENS_PER_MESSAGE - 2)
        return ids + [100_001, 100_004, 100_002][:REPLY_PRIMER]

    def count_chat(self, messages: list[Message]) -> int:
        return len(self.encode_chat(messages))
