"""Judge calibration: agreement and bias checks, with sim judges of known behaviour."""

from __future__ import annotations

import asyncio
import json

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.grading.judge import (
    JudgeScorer,
    LabelledItem,
    acalibrate,
    calibrate,
    cohen_kappa,
    judge_prompt,
    load_labelled_set,
    parse_grade,
    resolve_judge,
    synthetic_labelled_set,
)
from ctxprobe.sim.judge import SimJudge
from ctxprobe.core.case import Cell, Case
from ctxprobe.tokenizers import resolve_tokenizer


def _judge(spec: str):
    return resolve_judge(spec, resolve_tokenizer("local"))


def test_fair_judge_passes_the_synthetic_calibration() -> None:
    report = calibrate(_judge("sim-judge:fair"))
    assert report.passed and report.reasons == []
    assert report.accuracy == 1.0 and report.kappa == 1.0
    assert report.length_flip_rate == 0.0 and report.position_flip_rate == 0.0 and report.parse_failures == 0
    assert "PASS" in report.summary() and report.to_dict()["thresholds"]["min_kappa"] == 0.7


def test_length_biased_judge_is_flagged() -> None:
    report = calibrate(_judge("sim-judge:length-biased?words=30"))
    assert not report.passed and report.length_biased and not report.position_biased
    assert report.favours_longer > 0
    assert any(r.startswith("length-biased") for r in report.reasons)
    # on the plain answers it agrees with the labels: only the bias check catches it
    assert report.accuracy == 1.0


def test_position_biased_judge_is_flagged() -> None:
    report = calibrate(_judge("sim-judge:position-biased"))
    assert not report.passed and report.position_biased


def test_synthetic_set_is_balanced_and_varied() -> None:
    items = synthetic_labelled_set()
    assert sum(it.label for it in items) == len(items) // 2
    assert any(it.shorter for it in items) and len({it.reference for it in items}) == len(items)


def test_kappa() -> None:
    assert cohen_kappa([True, False, True, False], [True, False, True, False]) == 1.0
    assert cohen_kappa([True, False, True, False], [False, True, False, True]) == -1.0
    assert cohen_kappa([True, True, False, False], [True, True, True, True]) == 0.0


def test_prompt_orders_and_grade_parsing() -> None:
    a = judge_prompt("Q?", "Quilport", "It is Quilport.")
    b = judge_prompt("Q?", "Quilport", "It is Quilport.", order="answer-first")
    assert a.index("Reference answer") < a.index("Candidate answer")
    assert b.index("Candidate answer") < b.index("Reference answer")
    assert parse_grade("GRADE: CORRECT") is True and parse_grade("grade: incorrect.") is False
    assert parse_grade("I think so") is None


def _case() -> Case:
    return Case(cell=Cell("documents", 512, 0.5), rep=0, seed=0, messages=[], expected=["Marisol Tenby"],
                meta={"question": "Who is the head gardener?", "aliases": []})


def test_scorer_refuses_an_untrusted_judge_unless_forced() -> None:
    biased = _judge("sim-judge:length-biased")
    with pytest.raises(CtxprobeError, match="not calibrated"):
        JudgeScorer(biased, None)
    with pytest.raises(CtxprobeError, match="length-biased"):
        JudgeScorer(biased, calibrate(biased))
    forced = JudgeScorer(biased, calibrate(biased), force=True)
    assert forced.forced


def test_scorer_grades_with_a_calibrated_judge() -> None:
    judge = _judge("sim-judge:fair")
    scorer = JudgeScorer(judge, calibrate(judge))
    assert scorer.score(_case(), "The head gardener is Marisol Tenby.").outcome == "correct"
    assert scorer.score(_case(), "It is Orlan Vesk.").score == 0.0
    assert scorer.score(_case(), "").outcome == "empty"

    class Mumbler(SimJudge):
        async def generate(self, request):  # type: ignore[override]
            r = await super().generate(request)
            r.text = "hmm"
            return r

    mumbler = Mumbler("fair")
    assert JudgeScorer(mumbler, None, force=True).score(_case(), "Marisol Tenby").outcome == "error"
    assert not calibrate(mumbler).passed  # unparseable replies fail calibration too


def test_user_labelled_set(tmp_path) -> None:
    good = [{"question": "Q?", "reference": "Quilport", "answer": "Quilport", "label": True},
            {"question": "Q?", "reference": "Quilport", "answer": "Varnby", "label": False, "shorter": "Varnby"}]
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in good) + "\n\n")
    items = load_labelled_set(path)
    assert items == [LabelledItem("Q?", "Quilport", "Quilport", True),
                     LabelledItem("Q?", "Quilport", "Varnby", False, None, "Varnby")]
    assert calibrate(_judge("sim-judge:fair"), items).passed
    path.write_text(json.dumps(good[0]) + "\n" + json.dumps({**good[1], "label": "yes"}) + "\n")
    with pytest.raises(CtxprobeError, match=r"labels\.jsonl line 2: .*label"):
        load_labelled_set(path)


def test_unknown_sim_judge() -> None:
    with pytest.raises(CtxprobeError, match="sim-judge:fair"):
        _judge("sim-judge:lazy")
    with pytest.raises(CtxprobeError, match="unknown parameter"):
        _judge("sim-judge:fair?words=3")


def test_any_provider_can_judge() -> None:
    # a model spec goes through resolve_provider: here a sim model, which cannot grade
    judge = _judge("sim:perfect")
    report = asyncio.run(acalibrate(judge, synthetic_labelled_set(6)))
    assert not report.passed and report.parse_failures > 0
