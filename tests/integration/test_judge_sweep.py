"""A sweep whose open-ended answers are graded by a calibrated judge."""

from __future__ import annotations

import pytest
from test_documents import _write

from ctxprobe.errors import CtxprobeError
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep


def _spec(tmp_path, judge: str, **extra):
    docs, qa = _write(tmp_path)
    return make_spec({"model": "sim:perfect", "lengths": "512,1k", "depths": "0,1", "reps": 2, "judge": judge,
                      "families": {"documents": {"docs": docs, "qa": qa, "match": "judge"}}, **extra})


def test_fair_judge_grades_and_its_calibration_is_stored(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    result = run_sweep(_spec(tmp_path, "sim-judge:fair"), store, progress=False)
    report = load_report(result.run_id, store)
    assert report.run.meta.judge_calibration["passed"] is True
    assert all(c.mean == 1.0 for c in report.profiles[0].cells)
    assert all(r["detail"]["judge"] == "sim-judge:fair" for r in iter_export(result.run_id, store))


def test_length_biased_judge_is_refused_unless_forced(tmp_path) -> None:
    with pytest.raises(CtxprobeError, match="not trusted"):
        run_sweep(_spec(tmp_path, "sim-judge:length-biased?words=40"), tmp_path / "b.sqlite", progress=False)
    result = run_sweep(_spec(tmp_path, "sim-judge:length-biased?words=40", force_judge=True), tmp_path / "f.sqlite",
                       progress=False)
    meta = load_report(result.run_id, tmp_path / "f.sqlite").run.meta
    assert meta.judge_calibration is not None and meta.judge_calibration["passed"] is False
    assert all(r["detail"]["forced"] for r in iter_export(result.run_id, tmp_path / "f.sqlite"))


def test_judge_family_without_judge_is_a_one_line_error(tmp_path) -> None:
    spec = _spec(tmp_path, "sim-judge:fair").model_copy(update={"judge": None})
    with pytest.raises(CtxprobeError, match="--judge"):
        run_sweep(spec, tmp_path / "n.sqlite", progress=False)
