"""The HTML page without a browser: several families, secrets, intervals, user errors."""

from __future__ import annotations

import pytest

from ctxprobe.analysis.grid import profile
from ctxprobe.core.rows import ResultRow
from ctxprobe.report.html.page import render_html
from ctxprobe.report.load import Report
from ctxprobe.store import RunMeta, RunRecord


def _report(model: str, families: dict[str, float], run_id: str = "r1") -> Report:
    """A Report from synthetic rows: accuracy = ``slope`` decline per length doubling."""
    rows = []
    for fam, slope in families.items():
        for i, length in enumerate((1024, 2048, 4096, 8192)):
            for depth in (0.0, 0.5, 1.0):
                for rep in range(10):
                    ok = rep < round(10 * max(0.0, 1 - slope * i))
                    rows.append(ResultRow(fam, length, depth, rep, "correct" if ok else "wrong", float(ok)))
    run = RunRecord(run_id, "2025-01-01", "2025-01-01", model, "local", ",".join(families), "0.1.0",
                    {"seed": 0, "decoding": {"temperature": 0.0, "max_tokens": 48}, "lengths": [1024, 8192]},
                    RunMeta(chat_template_hash="abc123"), "complete", 120, 120)
    return Report(run=run, profiles=profile(rows, 0.856), threshold=0.856, notes=["a note <b>escaped</b>"],
                  intervals={})


def test_all_families_profile_secrets_and_intervals(tmp_path) -> None:
    model = "openai-compat:qwen@https://alice:HUNTER2PASS@llm.example:8443/v1?api_key=SK-LEAKYTOKEN&region=eu"
    report = _report(model, {"niah": 0.0, "aggregation": 0.3})
    page = render_html([report], intervals=[{"niah": (4096, 8192)}], png_dir=tmp_path)
    assert "HUNTER2PASS" not in page and "SK-LEAKYTOKEN" not in page and "alice" not in page
    assert "https://llm.example:8443/v1?api_key=REDACTED&amp;region=eu" in page
    for fam in ("niah", "aggregation"):
        assert f'id="family-{fam}"' in page
    assert (tmp_path / "r1" / "all-families.png").stat().st_size > 10_000
    # niah: the interval given is 4K–8K, so only its lower end is "reliable", not the observed 8K
    assert "reliable up to 4K tokens</span> (95% confidence; at most 8K, observed 8K" in page
    assert "reliable up to 8K" not in page
    # aggregation: no interval, so no confident claim at all, only the observation
    assert "observed effective length 1K (no interval computed: not a confident statement)" in page
    assert "scorer strict · lengths in tokens" in page
    assert "<script" not in page
    assert "a note &lt;b&gt;escaped&lt;/b&gt;" in page


def test_no_runs_is_a_user_error() -> None:
    from ctxprobe.errors import CtxprobeError

    with pytest.raises(CtxprobeError):
        render_html([])
