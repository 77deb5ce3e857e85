"""Harness runs (inspect_ai, lm-eval) without the harnesses: the cases they are given are
``ctxprobe run``'s, and replies imported back score and label as ``ctxprobe run`` stores them.

A real sweep of a sim that reads the prompt (``sim:blind-middle``: the middle depths are
lost, so accuracies differ by cell) is the reference; the store is a real SQLite file.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from ctxprobe.core.outcome import Outcome
from ctxprobe.errors import CtxprobeError
from ctxprobe.harnesses.cases import HarnessCases, Reply, harness_spec
from ctxprobe.harnesses.importing import import_replies
from ctxprobe.harnesses.models import inspect_model, tokenizer_for
from ctxprobe.report.load import load_report
from ctxprobe.scores.outcome import truncation_tolerance
from ctxprobe.spec import make_spec
from ctxprobe.store import iter_export
from ctxprobe.sweep.run import run_sweep

SPEC = {"model": "sim:blind-middle", "tokenizer": "local", "families": {"niah": {}}, "lengths": [1024, 2048],
        "depths": [0.0, 0.5, 1.0], "reps": 2, "seed": 3}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[dict]]:
    store = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    result = run_sweep(make_spec(SPEC), store, progress=False)
    return store, result.run_id, list(iter_export(result.run_id, store))


def _harness() -> HarnessCases:
    spec = harness_spec("niah", model="sim:blind-middle", tokenizer="local", lengths="1k,2k", depths="0,0.5,1",
                        reps=2, seed=3)
    return HarnessCases(spec, "local")


def _cells(store: Path, run_id: str) -> dict[tuple[int, float], list[float]]:
    cells: dict[tuple[int, float], list[float]] = defaultdict(list)
    for rec in iter_export(run_id, store):
        if rec["score"] is not None:
            cells[(rec["length"], rec["depth"])].append(rec["score"])
    return {k: sorted(v) for k, v in cells.items()}


def test_a_harness_gets_the_runs_exact_cases(reference) -> None:
    _, _, records = reference
    cases = _harness().cases
    assert sorted(cases) == sorted(r["case_id"] for r in records)
    for rec in records:
        case = cases[rec["case_id"]]
        assert case.prompt_hash == rec["prompt_hash"]
        assert case.token_count == rec["token_count"]
        assert case.messages == rec["messages"]


def test_sample_metadata_names_the_case() -> None:
    harness = _harness()
    case = harness.cases["niah/L2048/d0.5/r1"]
    meta = harness.sample_metadata(case)
    assert meta == {"case_id": "niah/L2048/d0.5/r1", "family": "niah", "length": 2048, "depth": 0.5, "rep": 1,
                    "token_count": case.token_count, "prompt_hash": case.prompt_hash, "max_tokens": 48}
    assert 2048 - 8 <= case.token_count <= 2048


def test_imported_replies_score_and_report_as_the_run(reference, tmp_path: Path) -> None:
    store, run_id, records = reference
    replies = [Reply(r["case_id"], r["output"], r["finish_reason"], r["reported_prompt_tokens"],
                     r["completion_tokens"], prompt_hash=r["prompt_hash"]) for r in records]
    out = tmp_path / "imported.sqlite"
    imp = import_replies(_harness(), replies, out, source="test", source_id="one", harness_model="test:sim")
    assert (imp.planned, imp.answered, imp.resumed) == (12, 12, False)
    assert _cells(out, imp.run_id) == _cells(store, run_id)
    # the middle depth is lost by this sim: the accuracies are not all equal
    assert len({sum(v) for v in _cells(out, imp.run_id).values()}) > 1
    ours, theirs = load_report(imp.run_id, out), load_report(run_id, store)
    assert ours.intervals["niah"].line() == theirs.intervals["niah"].line()
    by_id = {r["case_id"]: r for r in iter_export(imp.run_id, out)}
    for rec in records:
        assert (by_id[rec["case_id"]]["score"], by_id[rec["case_id"]]["outcome"]) == (rec["score"], rec["outcome"])
    again = import_replies(_harness(), replies, out, source="test", source_id="one", harness_model="test:sim")
    assert again.run_id == imp.run_id and again.resumed


def test_another_prompt_or_case_is_refused(tmp_path: Path) -> None:
    harness = _harness()
    with pytest.raises(CtxprobeError, match="another prompt than its case"):
        import_replies(harness, [Reply("niah/L1024/d0/r0", "x", prompt_hash="0" * 64)], tmp_path / "s.sqlite",
                       source="test", source_id="x", harness_model="m")
    with pytest.raises(CtxprobeError, match="no case of the spec"):
        import_replies(harness, [Reply("niah/L4096/d0/r0", "x")], tmp_path / "s.sqlite", source="test",
                       source_id="x", harness_model="m")


def test_harness_failures_stay_out_of_accuracy(tmp_path: Path) -> None:
    harness = _harness()
    case = harness.cases["niah/L2048/d0/r0"]
    tol = truncation_tolerance(case.token_count)
    right = case.expected[0]
    assert harness.score(Reply(case.case_id, None, error="timeout"))[0] is None
    cut = harness.score(Reply(case.case_id, right, "stop", prompt_tokens=case.token_count - tol - 1))
    assert cut[0] is None and cut[1].outcome == Outcome.INPUT_TRUNCATED
    edge = harness.score(Reply(case.case_id, right, "stop", prompt_tokens=case.token_count - tol))
    assert edge[0] == 1.0 and edge[1].outcome == Outcome.CORRECT
    cut_answer = harness.score(Reply(case.case_id, "The special magic", "length"))
    assert cut_answer[1].outcome == Outcome.OUTPUT_TRUNCATED
    imp = import_replies(harness, [Reply(case.case_id, None, error="timeout"), Reply("niah/L1024/d0/r0", "nothing")],
                         tmp_path / "s.sqlite", source="test", source_id="f", harness_model="m")
    assert imp.answered == 1 and imp.outcomes == {"error": 1, "wrong": 1}


@pytest.mark.parametrize(("name", "base_url", "want"), [
    ("openai-api/sim/perfect", "http://127.0.0.1:9/v1", "endpoint:http://127.0.0.1:9/v1?model=perfect"),
    ("vllm/org/model", "http://127.0.0.1:9/v1/", "endpoint:http://127.0.0.1:9/v1?model=org%2Fmodel"),
    ("openai/gpt-4o", None, "tiktoken:o200k_base"),
    ("openai/gpt-4", None, "tiktoken:cl100k_base"),
    ("anthropic/claude-sonnet-4-5", None, "approx"),
])
def test_the_tokenizer_is_inferred_as_ctxprobe_infers_it(name: str, base_url: str | None, want: str) -> None:
    assert tokenizer_for(inspect_model(name, base_url)) == want


def test_a_model_ctxprobe_cannot_count_for_needs_the_tokenizer_named() -> None:
    with pytest.raises(CtxprobeError, match=r"mockllm/model.*-T tokenizer=NAME"):
        tokenizer_for(inspect_model("mockllm/model", None))
    with pytest.raises(CtxprobeError, match="vllm/x"):
        tokenizer_for(inspect_model("vllm/x", None))  # no server to count with
    assert tokenizer_for(inspect_model("mockllm/model", None), "local") == "local"


def test_judged_families_and_budgets_are_refused() -> None:
    with pytest.raises(CtxprobeError, match="reasoning budgets"):
        HarnessCases(make_spec({**SPEC, "reasoning_budgets": [0, 1024]}), "local")
    assert json.loads(_harness().spec.model_dump_json())["lengths"] == [1024, 2048]


def test_prompt_tokens_are_inspects_usage_with_the_cache_added_back() -> None:
    from types import SimpleNamespace

    from ctxprobe.harnesses.inspect_log import prompt_tokens_of

    def usage(i: int, read: int | None, write: int | None) -> SimpleNamespace:
        return SimpleNamespace(input_tokens=i, input_tokens_cache_read=read, input_tokens_cache_write=write)

    assert prompt_tokens_of(usage(100, 1900, None)) == 2000  # inspect subtracts cache reads
    assert prompt_tokens_of(usage(0, 2048, 0)) == 2048  # a prompt read whole from the cache
    assert prompt_tokens_of(usage(7, None, 3)) == 10
    assert prompt_tokens_of(usage(0, None, None)) is None and prompt_tokens_of(None) is None
