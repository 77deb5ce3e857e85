"""The word tokenizer the sim, sim-server and OpenAI-compatible tests count with (one copy)."""

from __future__ import annotations

import re
import zlib

from ctxprobe.tokenizers.base import Message, TokenizerBase


class WordTokenizer(TokenizerBase):
    """Words, punctuation and ``<|tag|>`` markers as tokens; a trivial chat template."""

    name = "test:words"
    _TOKEN = re.compile(r"<\|[a-z]+\|>|\w+|[^\w\s]")

    def encode(self, text: str) -> list[int]:
        return [zlib.crc32(t.encode()) % 50_000 for t in self._TOKEN.findall(text)]

    def count(self, text: str) -> int:
        return len(self._TOKEN.findall(text))

    def render_chat(self, messages: list[Message]) -> str:
        turns = "".join(f"<|{m['role']}|>\n{m['content']}<|end|>\n" for m in messages)
        return turns + "<|assistant|>\n"

    def encode_chat(self, messages: list[Message]) -> list[int]:
        return self.encode(self.render_chat(messages))

    def count_chat(self, messages: list[Message]) -> int:
        return self.count(self.render_chat(messages))
