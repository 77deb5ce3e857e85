"""The seed's fake models through the real pipeline (in process and over loopback HTTP)."""

from __future__ import annotations

import math

from ctxprobe.haystack import split_sentences
from ctxprobe.sim.model import SimModel  # noqa: F401  (import check: sims exist)
from ctxprobe.sim.server import SimServer
from ctxprobe.models import resolve_provider
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

LENGTHS = "512,1k,2k"
DEPTHS = "0,0.25,0.5,0.75,1"


def _sweep(model: str, store, **extra):
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": LENGTHS, "depths": DEPTHS, "reps": 2,
                      "families": {"niah": {"distractors": 3}}, **extra})
    result = run_sweep(spec, store, progress=False)
    return result, load_report(result.run_id, store)


def _means_by_depth(report):
    prof = report.profiles[0]
    by_depth: dict[float, list[float]] = {}
    for c in prof.cells:
        by_depth.setdefault(c.depth, []).append(c.mean)
    return {d: sum(v) / len(v) for d, v in by_depth.items()}


def test_perfect_scores_one_everywhere(tmp_path) -> None:
    result, report = _sweep("sim:perfect", tmp_path / "s.sqlite")
    prof = report.profiles[0]
    assert len(prof.cells) == 15
    assert all(c.mean == 1.0 and c.n == 2 for c in prof.cells)
    assert prof.effective_length == 2048


def test_echo_scores_zero_with_distractors(tmp_path) -> None:
    _, report = _sweep("sim:echo", tmp_path / "s.sqlite")
    prof = report.profiles[0]
    assert all(c.mean == 0.0 for c in prof.cells)
    assert all(set(c.outcomes) == {"distractor"} for c in prof.cells)
    assert prof.effective_length is None


def test_blind_middle_shows_the_u(tmp_path) -> None:
    _, report = _sweep("sim:blind-middle", tmp_path / "s.sqlite")
    means = _means_by_depth(report)
    assert means[0.0] == 1.0 and means[1.0] == 1.0
    assert means[0.5] == 0.0


def test_cases_are_exact_to_budget(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    result, _ = _sweep("sim:perfect", store)
    tok = resolve_tokenizer("local")
    n = 0
    for rec in iter_export(result.run_id, store):
        n += 1
        recount = tok.count_chat(rec["messages"])
        assert recount == rec["token_count"]
        assert recount <= rec["length"]
        hay = rec["messages"][-1]["content"].split("\n\n")[1]
        longest = max(tok.count(" " + s) for s in split_sentences(hay))
        assert rec["length"] - recount <= max(math.ceil(0.01 * rec["length"]), longest)
        # the needle sits where the case says it does
        ids = tok.encode_chat(rec["messages"])
        needle = tok.encode((" " if rec["depth"] > 0 else "") + rec["meta"]["needle"])
        assert ids[rec["needle_token_pos"]: rec["needle_token_pos"] + len(needle)] == needle
        assert abs(rec["realised_depth"] - rec["depth"]) < 0.05
    assert n == 30


def test_same_results_over_loopback_http(tmp_path, case_requests) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:blind-middle", tok), tok) as server:
        url = server.start()
        result, report = _sweep(f"openai-compat:sim@{url}", tmp_path / "h.sqlite")
        assert case_requests(server) == 30
    _, local = _sweep("sim:blind-middle", tmp_path / "l.sqlite")
    assert _means_by_depth(report) == _means_by_depth(local)
    # the server counted the templated prompt with the same tokenizer: reported == built
    for rec in iter_export(result.run_id, tmp_path / "h.sqlite"):
        assert rec["reported_prompt_tokens"] == rec["token_count"]


def test_rerun_resumes_without_resending(tmp_path, case_requests) -> None:
    store = tmp_path / "s.sqlite"
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = server.start()
        first, _ = _sweep(f"openai-compat:sim@{url}", store)
        again, _ = _sweep(f"openai-compat:sim@{url}", store, concurrency=2)  # transport change: same run
        assert again.run_id == first.run_id and again.resumed
        assert again.sent == 0 and again.already_done == 30
        assert case_requests(server) == 30


def test_truncating_server_is_flagged_not_scored(tmp_path) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok, truncate_to=900) as server:
        url = server.start()
        _, report = _sweep(f"openai-compat:sim@{url}", tmp_path / "t.sqlite")
    prof = report.profiles[0]
    for c in prof.cells:
        if c.length > 900:
            assert c.outcomes == {"input_truncated": 2} and c.n == 0
        else:
            assert c.mean == 1.0


def test_one_family_twice_under_labels(tmp_path) -> None:
    spec = make_spec({"model": "sim:perfect", "lengths": "1k", "depths": "0,1", "reps": 1,
                      "families": {"single": {"family": "niah", "distractors": 2},
                                   "multiquery": {"family": "niah", "variant": "multiquery", "queries": 3}}})
    result = run_sweep(spec, tmp_path / "s.sqlite", progress=False)
    report = load_report(result.run_id, tmp_path / "s.sqlite")
    assert [p.family for p in report.profiles] == ["multiquery", "single"]
    assert all(c.mean == 1.0 for p in report.profiles for c in p.cells)


def test_ruler_preset_from_cli(tmp_path) -> None:
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "run", "--preset", "ruler", "--model", "sim:perfect",
                           "--lengths", "8k", "--depths", "0.5", "--reps", "1", "--store", str(tmp_path / "r.sqlite"),
                           "--no-plots", "--no-progress"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(subprocess.run([sys.executable, "-m", "ctxprobe.cli", "runs", "--json", "--store",
                                      str(tmp_path / "r.sqlite")], capture_output=True, text=True).stdout)
    rep = load_report(runs[0]["run_id"], tmp_path / "r.sqlite")
    names = {p.family for p in rep.profiles}
    assert {"niah_single_1", "niah_multikey_3", "vt", "cwe", "fwe"} <= names  # the QA tasks need documents
    assert all(p.effective_length == 8192 for p in rep.profiles)


def test_ruler_scorer_rescores_stored_outputs(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    result, strict = _sweep("sim:echo", store)
    ruler = load_report(result.run_id, store, scorer="ruler")
    # echo lists the target among the distractors: strict scoring gives 0, RULER's
    # string_match_all (is every reference in the output?) gives full credit
    assert all(c.mean == 0.0 for c in strict.profiles[0].cells)
    assert all(c.mean == 1.0 for c in ruler.profiles[0].cells)
    assert ruler.to_dict()["scorer"] == "ruler"
