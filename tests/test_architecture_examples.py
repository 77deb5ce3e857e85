"""The seams examples in docs/architecture.md are real: each runs as written, and what it
registers works through the same lookups the sweep uses."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from ctxprobe.core import registry
from ctxprobe.core.case import Cell
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.tasks import BuildContext, make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _examples() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def test_each_example_is_short_and_runs() -> None:
    blocks = _examples()
    assert len(blocks) == 3 and all(len(b.splitlines()) <= 30 for b in blocks)
    try:
        for block in blocks:
            exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
        tok = resolve_tokenizer("words:4")
        assert tok.count("abcdefgh") == 2  # 8 characters at 4 a token
        provider = resolve_provider("lastword/any", tok)
        family = make_family("echo", BuildContext(tok, None))
        case = family.generate(Cell("echo", 300, 0.5), 0, seed=3, params=validate_params("echo", {}))
        assert 150 < case.token_count <= 300
        reply = asyncio.run(provider.generate(GenerateRequest(case.messages, 8)))
        assert reply.text == "word"  # it read the prompt's last word, not the answer key
        assert family.score(case, reply.text).outcome == "wrong"
        assert family.score(case, f"The word is {case.expected[0]}").outcome == "correct"
    finally:
        registry.unregister("providers", "lastword")
        registry.unregister("tokenizers", "words")
        registry.unregister("families", "echo")
