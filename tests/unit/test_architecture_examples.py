"""The seams examples in docs/architecture.md are real: each runs as written, and what it
registers works through the same lookups the sweep and the report use."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from ctxprobe.core import registry
from ctxprobe.core.case import Cell
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.analysis.grid import profile
from ctxprobe.core.rows import ResultRow
from ctxprobe.report.html.page import render_html
from ctxprobe.report.load import Report
from ctxprobe.store import RunMeta, RunRecord
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def _examples() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def test_each_example_is_short_and_runs() -> None:
    blocks = _examples()
    assert len(blocks) == 4 and all(len(b.splitlines()) <= 30 for b in blocks)
    # a plugin imports from ctxprobe.plugin alone, never from the deep modules
    for block in blocks:
        ours = re.findall(r"^(?:from|import) (ctxprobe\S*)", block, re.M)
        assert ours == ["ctxprobe.plugin"], ours
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
        _check_report_section()
    finally:
        registry.unregister("providers", "lastword")
        registry.unregister("tokenizers", "words")
        registry.unregister("families", "echo")
        registry.unregister("report_sections", "by-length")
        registry.unregister("report_sections", "broken")


def _check_report_section() -> None:
    """The example's section is on the page, in its table of contents, its text escaped;
    a section that raises shows its error in one line and the page is still built."""
    rows = [ResultRow("niah", length, 0.5, rep, "correct" if rep < ok else "wrong", float(rep < ok))
            for length, ok in ((1024, 4), (2048, 1)) for rep in range(4)]
    run = RunRecord("r1", "2025-01-01", "2025-01-01", "sim:<b>x</b>", "local", "niah", "0.1.0",
                    {"seed": 0, "decoding": {"temperature": 0.0, "max_tokens": 8}, "lengths": [1024, 2048]},
                    RunMeta(), "complete", 8, 8)
    report = Report(run=run, profiles=profile(rows, 0.856), threshold=0.856, notes=[], intervals={})

    def broken(views):  # type: ignore[no-untyped-def]
        raise ValueError("no\ndata <here>")

    registry.register("report_sections", "broken", broken, origin="test")
    page = render_html([report])
    assert '<a href="#section-by-length">Accuracy by length</a>' in page
    assert '<section id="section-by-length"><h2>Accuracy by length</h2>' in page
    assert "<td>sim:&lt;b&gt;x&lt;/b&gt; · r1</td><td>niah</td><td>1024</td><td>1.00</td><td>4</td>" in page
    assert "<td>2048</td><td>0.25</td>" in page and "<b>x</b>" not in page
    assert "this section could not be built (test): ValueError: no data &lt;here&gt;" in page
