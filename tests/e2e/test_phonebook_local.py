"""The real embedded model (SmolLM2-135M) runs the phone-book grid end to end."""

from __future__ import annotations

import pytest

from ctxprobe.families.phonebook.report_plots import phonebook_report
from ctxprobe.sweep.run import run_sweep
from ctxprobe.families.phonebook.task_grid import phonebook_spec


@pytest.mark.slow
@pytest.mark.timeout(600)  # ~3 min alone on 2 cores; more beside another real-model test
def test_local_model_phonebook_end_to_end(tmp_path) -> None:
    pytest.importorskip("xllamacpp")
    store = tmp_path / "s.sqlite"
    # ~1K and ~1.5K tokens; output capped so the test stays within its time budget on a busy CPU
    spec = phonebook_spec(model="local", lengths=["1k", "1.5k"], needles=[10], runs=1, concurrency=1,
                          max_tokens=160)
    result = run_sweep(spec, store, progress=False)
    assert result.sent == 2
    report = phonebook_report([result.run_id], store, tmp_path / "plots", bootstrap=50)
    (an,) = report.analyses.values()
    assert an.lengths == [1024, 1536] and an.needles == [10]
    assert all(b.n == 1 for b in an.bins) and len(an.bins) == 20
    position = [p for p in report.plots if p.name.endswith("-position.png")]
    assert position and position[0].stat().st_size > 10_000
    assert all(m.value is None or 0.0 <= m.value <= 100.0 for m in an.metrics)
