"""The judge behind a fault-injecting server: its 429s, hangs and dropped connections are
the harness's failures. The sweep runs to the end; the cases whose grade could not be had
are labelled ``error`` (no score, never the model's miss); a resume retries exactly those
and scores them."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from ctxprobe.cases.builder import build_cases
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.sim.faults import FaultPlan
from ctxprobe.sim.judge import SimJudge
from ctxprobe.sim.server import SimServer, _messages_hash
from ctxprobe.plan.grid import planned_cases
from ctxprobe.grading.judge import PADDING, judge_prompt, synthetic_labelled_set
from ctxprobe.spec import make_spec
from ctxprobe.store import iter_export
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

KINDS = {"429", "hang", "drop"}
#: One invented fact per document: every repetition asks its own question, so no two
#: cases send the judge the same prompt (a prompt's fault is fixed by its hash).
FACTS = [("north vault", "access code", "Kelvor-Dane"), ("east greenhouse", "head gardener", "Marisol Tenby"),
         ("west tower", "keeper", "Odran Vell"), ("south gate", "password", "Tamsin-Roe"),
         ("old mill", "miller", "Brannoc Hale"), ("river dock", "harbour master", "Ysolde Marr"),
         ("high library", "archivist", "Corvin Ashe"), ("salt mine", "foreman", "Petra Quill")]


def _docs(tmp_path) -> tuple[str, str]:
    docs = tmp_path / "docs"
    docs.mkdir()
    qa = []
    for i, (place, role, answer) in enumerate(FACTS):
        (docs / f"d{i}.txt").write_text(f"Notes on the {place}.\nThe {role} of the {place} is {answer}.\n")
        qa.append({"document": f"d{i}.txt", "question": f"What is the {role} of the {place}?",
                   "answer": answer})
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qa))
    return str(docs), str(tmp_path / "qa.jsonl")


@dataclass
class SweepOnlyFaults(FaultPlan):
    """Faults only for the judge's grading of the sweep's cases: the calibration prompts
    (named by hash in ``spared``) are served cleanly, so the judge passes calibration."""

    spared: frozenset[str] = field(default_factory=frozenset)

    def kind_for(self, prompt_hash: str) -> str | None:
        return None if prompt_hash in self.spared else super().kind_for(prompt_hash)


def _hash(prompt: str) -> str:
    return _messages_hash([{"role": "user", "content": prompt}])


def _calibration_hashes() -> frozenset[str]:
    out = set()
    for it in synthetic_labelled_set():
        for answer, order in ((it.answer, "reference-first"), (it.longer or it.answer + PADDING, "reference-first"),
                              (it.shorter, "reference-first"), (it.answer, "answer-first")):
            if answer is not None:
                out.add(_hash(judge_prompt(it.question, it.reference, answer, order)))  # type: ignore[arg-type]
    return frozenset(out)


def _case_judge_hashes(spec) -> dict[str, str]:
    """case id -> hash of the judge prompt grading it (sim:perfect's answer, read from the prompt)."""
    tok = resolve_tokenizer("local")
    model = resolve_provider(spec.model, tok)

    async def answers() -> dict[str, str]:
        out = {}
        for case in build_cases(spec, planned_cases(spec)):
            r = await model.generate(GenerateRequest(case.messages, max_tokens=spec.decoding.max_tokens))
            prompt = judge_prompt(str(case.meta["question"]), case.expected[0], r.text,
                                  also_accepted=tuple(case.meta.get("aliases", ())))
            out[case.case_id] = _hash(prompt)
        return out

    return asyncio.run(answers())


def _plan(spec) -> tuple[SweepOnlyFaults, dict[str, str]]:
    """A plan under which the cases' judge prompts meet every kind and some meet none
    (which prompt meets which fault is fixed by its hash: a seed is chosen for them)."""
    hashes = _case_judge_hashes(spec)
    spared = _calibration_hashes()
    assert len(set(hashes.values())) == len(hashes) and not spared & set(hashes.values())
    for i in range(1000):
        # times=2 with retries=1: the first run's two attempts both fail, the resume's succeeds
        plan = SweepOnlyFaults({"429": 0.2, "hang": 0.2, "drop": 0.2}, times=2, hang_seconds=5.0,
                               seed=f"judge{i}", spared=spared)
        kinds = [plan.kind_for(h) for h in hashes.values()]
        if KINDS <= set(kinds) and None in kinds:
            return plan, hashes
    raise AssertionError("no seed meets every kind")


def test_judge_failures_are_harness_errors_and_a_resume_scores_them(tmp_path) -> None:
    docs, qa = _docs(tmp_path)
    base = {"model": "sim:perfect", "tokenizer": "local", "lengths": "512", "depths": "0.5", "reps": len(FACTS),
            "families": {"documents": {"docs": docs, "qa": qa, "match": "judge"}}, "timeout": 0.5, "retries": 1}
    plan, hashes = _plan(make_spec({**base, "judge": "sim-judge:fair"}))
    store = tmp_path / "s.sqlite"
    tok = resolve_tokenizer("local")
    with SimServer(SimJudge("fair"), tok, faults=plan, model_id="judge") as server:
        spec = make_spec({**base, "judge": f"openai-compat:judge@{server.start()}"})
        first = run_sweep(spec, store, progress=False)  # runs to the end despite the judge's failures
        records = {r["case_id"]: r for r in iter_export(first.run_id, store)}
        assert set(records) == set(hashes) and first.sent == len(hashes)
        failing = {c for c, h in hashes.items() if plan.kind_for(h) is not None}
        for case_id, r in records.items():
            if case_id in failing:
                assert r["outcome"] == "error" and r["score"] is None, (case_id, r["outcome"])
                assert "judge" in r["detail"]["error"], r["detail"]
            else:
                assert r["outcome"] == "correct" and r["score"] == 1.0, (case_id, r["outcome"], r["detail"])
        assert {plan.kind_for(hashes[c]) for c in failing} == KINDS
        counts = dict(server.prompt_counts)

        again = run_sweep(spec, store, progress=False)
        assert again.resumed and again.run_id == first.run_id
        assert again.sent == len(failing) and again.already_done == len(hashes) - len(failing)
        after = {r["case_id"]: r for r in iter_export(first.run_id, store)}
        assert all(r["outcome"] == "correct" and r["score"] == 1.0 for r in after.values())
        for case_id, h in hashes.items():
            # the resume graded exactly the failed cases again: one more judge call each, none for the rest
            assert server.prompt_counts[h] == counts[h] + (case_id in failing), case_id
            if case_id not in failing:
                assert after[case_id] == records[case_id]  # stored results untouched
