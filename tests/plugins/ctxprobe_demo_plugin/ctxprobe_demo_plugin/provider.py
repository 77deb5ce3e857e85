"""``boxreader/NAME[?window=CHARS]``: a model that reads the prompt like a reader would.

It finds the question's box number in the last user message and answers with the colour
stated for that box, looking only at the last ``window`` characters of the prompt (all of
it by default): facts placed earlier are forgotten, as a short-context model forgets.
"""

from __future__ import annotations

import re
from typing import Any

from ctxprobe.models.base import GenerateRequest, GenerateResult

_QUESTION = re.compile(r"What colour is box (\d+)\?")


class BoxReader:
    ids_policy = "drop"  # it reads text, not token ids
    max_concurrency: int | None = 4
    context_window: int | None = None

    def __init__(self, name: str, window: int | None) -> None:
        self.name, self.window = name, window

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        text = "\n".join(m["content"] for m in request.messages)
        seen = text[-self.window:] if self.window else text
        asked = _QUESTION.findall(text)
        found = re.search(rf"box {asked[-1]} is (\w+)\.", seen) if asked else None
        return GenerateResult(found.group(1) if found else "I cannot find that box.", finish_reason="stop")

    async def aclose(self) -> None:
        return None


def make_provider(ref: Any, **_: Any) -> BoxReader:
    window = ref.options.get("window")
    return BoxReader(ref.spec, int(window) if window else None)


make_provider.default_tokenizer = "approx"  # type: ignore[attr-defined]  # used when --tokenizer is not given
