"""The RULER preset end to end: over a loopback sim server with no repeated prompt, RULER's
headline, and ``export --ruler`` read back with RULER's own reading and scoring rules."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from ctxprobe.core.records import StoredResponse
from ctxprobe.core.rows import ResultRow
from ctxprobe.families.ruler.analysis import ruler_headline
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, GenerateResult
from ctxprobe.sim.server import SimServer, _messages_hash
from ctxprobe.sweep.preflight import PROBE_MESSAGES
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.runner import RunnerConfig, execute
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Case, Cell
from ctxprobe.families.ruler.task import ruler_families
from ctxprobe.tokenizers import resolve_tokenizer
from ctxprobe.tokenizers.base import fold_prefill

# RULER's synthetic.yaml task names and base tasks, typed from the original.
RULER_YAML = {"niah_single_1": "niah", "niah_single_2": "niah", "niah_single_3": "niah", "niah_multikey_1": "niah",
              "niah_multikey_2": "niah", "niah_multikey_3": "niah", "niah_multivalue": "niah",
              "niah_multiquery": "niah", "vt": "variable_tracking", "cwe": "common_words_extraction",
              "fwe": "freq_words_extraction", "qa_1": "qa", "qa_2": "qa"}
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _preset_spec(model: str, lengths: str, depths: str, reps: int, only: frozenset[str] | None = None):
    families = {n: {"family": t["family"], **t["params"]} for n, t in ruler_families().items()
                if t["family"] and (only is None or n in only)}
    return make_spec({"model": model, "tokenizer": "local", "lengths": lengths, "depths": depths, "reps": reps,
                      "families": families})


def _sweep_over_http(kind: str, store: Path, lengths: str, depths: str, reps: int,
                     case_requests: Callable[[SimServer], int], only: frozenset[str] | None = None):
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider(kind, tok), tok) as server:
        url = server.start()
        result = run_sweep(_preset_spec(f"openai-compat:sim@{url}", lengths, depths, reps, only), store, progress=False)
        counts = {h: n for h, n in server.prompt_counts.items() if h != _messages_hash(PROBE_MESSAGES)}
        served = case_requests(server)
    return result, counts, served


def test_preset_over_http_sends_every_prompt_once(tmp_path, case_requests) -> None:
    result, counts, served = _sweep_over_http("sim:perfect", tmp_path / "r.sqlite", "4k,8k", "0,1", 2,
                                               case_requests)
    n_cases = 11 * 2 * 2 * 2
    assert served == n_cases and len(counts) == n_cases and set(counts.values()) == {1}
    recs = list(iter_export(result.run_id, tmp_path / "r.sqlite"))
    assert len(recs) == n_cases
    for rec in recs:
        # the server counted the prompt with its answer prefix continued: what the case was built to
        assert rec["reported_prompt_tokens"] == rec["token_count"]
        assert rec["token_count"] + rec["meta"]["tokens_to_generate"] <= rec["length"]
        assert rec["outcome"] == "correct", (rec["case_id"], rec["output"])
    report = load_report(result.run_id, tmp_path / "r.sqlite")
    assert report.headlines["ruler"].effective_length == 8192
    assert report.headlines["ruler"].missing == ["qa_1", "qa_2"]
    from ctxprobe.report.html.page import build_html_report

    build_html_report([result.run_id], tmp_path / "r.sqlite", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<section id="ruler">' in page and "RULER effective length (average ≥ 85.6): <b>8K</b>" in page


def test_sim_server_refuses_a_prefix_it_would_not_continue() -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = f"{server.start()}/chat/completions"
        body = {"model": "sim", "messages": [{"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": " Answer:"}]}
        refused = httpx.post(url, json=body, timeout=30)
        assert refused.status_code == 400 and "continue_final_message" in refused.json()["error"]["message"]
        assert httpx.post(url, json={**body, "continue_final_message": True}, timeout=30).status_code == 200


def test_answer_prefix_is_rendered_after_the_chat_template() -> None:
    tok = resolve_tokenizer("local")
    user = [{"role": "user", "content": "What is the special magic number for x?"}]
    prefixed = [*user, {"role": "assistant", "content": " The special magic number for x is"}]
    assert tok.render_chat(prefixed) == tok.render_chat(user) + " The special magic number for x is"
    user_ids = tok.encode_chat(user)
    assert tok.encode_chat(prefixed) == user_ids + tok.encode(" The special magic number for x is")
    assert tok.count_chat(prefixed) == len(tok.encode_chat(prefixed)) > tok.count_chat(user)
    # hosted APIs take no prefill: the prefix joins the user turn, as RULER's API clients send it
    assert fold_prefill(prefixed) == [{"role": "user", "content": user[0]["content"] + prefixed[1]["content"]}]
    assert fold_prefill(user) == user


def test_each_case_asks_for_its_own_output_tokens() -> None:
    seen: list[int] = []

    class Recorder:
        name, max_concurrency, context_window = "rec", None, None

        async def generate(self, request: GenerateRequest) -> GenerateResult:
            seen.append(request.max_tokens)
            return GenerateResult("ok", "stop", 1, 1)

        async def aclose(self) -> None:
            return None

    cases = [Case(Cell("vt", 512, 0.5), 0, 0, [{"role": "user", "content": "a"}], ["x"], max_tokens=30),
             Case(Cell("x", 512, 0.5), 0, 0, [{"role": "user", "content": "b"}], ["x"])]
    asyncio.run(execute(iter(cases), Recorder(), lambda _: None, RunnerConfig(concurrency=1, max_tokens=48)))
    assert sorted(seen) == [30, 48]


def _rows(scores: dict[tuple[str, int], list[float]]) -> list[ResultRow]:
    return [ResultRow(task, length, 0.5, i, "correct", s, 0)
            for (task, length), values in scores.items() for i, s in enumerate(values)]


def test_headline_bar_is_inclusive_and_the_walk_stops_at_the_first_failure() -> None:
    tasks = ["a", "b"]
    # 85.6 exactly passes; 85.59 does not; a pass after a failure does not count
    rows = _rows({("a", 4096): [0.856], ("b", 4096): [0.856], ("a", 8192): [0.8559], ("b", 8192): [0.8559],
                  ("a", 16384): [1.0], ("b", 16384): [1.0]})
    h = ruler_headline(rows, tasks)
    assert h is not None and h.scores["a"][4096] == 85.6 and h.scores["a"][8192] == 85.59
    assert h.average[4096] == pytest.approx(85.6) and h.effective_length == 4096
    h2 = ruler_headline(_rows({("a", 4096): [0.8559], ("b", 4096): [0.8559]}), tasks)
    assert h2 is not None and h2.effective_length is None
    # the average is over task scores (each rounded to 2 places, as RULER prints them)
    h3 = ruler_headline(_rows({("a", 4096): [1, 0, 0], ("b", 4096): [1.0]}), tasks)
    assert h3 is not None and h3.scores["a"][4096] == 33.33 and h3.average[4096] == pytest.approx((33.33 + 100) / 2)
    assert ruler_headline(_rows({("zzz", 4096): [1.0]}), tasks) is None


def _ruler_evaluate(data_dir: Path) -> dict[str, float]:
    """RULER's eval/evaluate.py re-implemented from the original: read each task's JSONL,
    postprocess predictions, score with the task's metric, round to 2 places."""
    def postprocess_pred(predict_str: str) -> str:
        predict_str = predict_str.strip()
        np_pattern = re.compile(r"[\x00-\x1f]")
        return np_pattern.sub("\n", predict_str).strip()

    def string_match_part(preds, refs):
        score = sum([max([1.0 if r.lower() in pred.lower() else 0.0 for r in ref])
                     for pred, ref in zip(preds, refs)]) / len(preds) * 100
        return round(score, 2)

    def string_match_all(preds, refs):
        score = sum([sum([1.0 if r.lower() in pred.lower() else 0.0 for r in ref]) / len(ref)
                     for pred, ref in zip(preds, refs)]) / len(preds) * 100
        return round(score, 2)

    metric = {"niah": string_match_all, "variable_tracking": string_match_all, "common_words_extraction":
              string_match_all, "freq_words_extraction": string_match_all, "qa": string_match_part}
    files = [f for f in os.listdir(data_dir) if Path(f).suffix == ".jsonl"]
    out = {}
    for task, base in RULER_YAML.items():
        if f"{task}.jsonl" not in files:
            continue
        lines = [json.loads(x) for x in (data_dir / f"{task}.jsonl").read_text(encoding="utf-8").splitlines() if x]
        predicts = [postprocess_pred(line["pred"]) for line in lines]
        references = [line.get("outputs", [line.get("output", "")]) for line in lines]
        [line["others"].get("id", line["index"]) for line in lines]  # RULER reads these; they must exist
        if len(references) > 0 and references[0][0] is not None:
            out[task] = metric[base](predicts, references)
        else:
            out[task] = 0.0
    return out


def test_export_is_read_by_rulers_rules_exactly_as_report_scorer_ruler(tmp_path, case_requests) -> None:
    store = tmp_path / "r.sqlite"
    result, _, _ = _sweep_over_http("sim:blind-middle", store, "4k,8k", "0,0.5,1", 1, case_requests)
    out = tmp_path / "ruler"
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "export", result.run_id, "--store", str(store),
                           "--ruler", "-o", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["4096", "8192"]
    rep = json.loads(subprocess.run([sys.executable, "-m", "ctxprobe.cli", "report", result.run_id, "--store",
                                     str(store), "--scorer", "ruler", "--json"], capture_output=True, text=True,
                                    env=env, timeout=300).stdout)
    ours = rep["ruler_headline"]["scores"]
    seen = set()
    for folder in out.iterdir():
        theirs = _ruler_evaluate(folder)
        assert set(theirs) == set(RULER_YAML) - {"qa_1", "qa_2"}
        for task, score in theirs.items():
            assert ours[task][folder.name] == score, (task, folder.name)
            seen.add(score)
            for line in (folder / f"{task}.jsonl").read_text().splitlines():
                rec = json.loads(line)
                assert set(rec) == {"index", "pred", "input", "outputs", "others", "truncation", "length"}
                assert rec["length"] <= int(folder.name)
    assert len(seen) > 2  # a mixed profile, not all 0 or all 100
    averages = rep["ruler_headline"]["average"]
    for length, avg in averages.items():
        assert avg == round(sum(ours[t][length] for t in ours) / len(ours), 2)


def test_cli_names_tasks_that_cannot_run_before_the_sweep(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "run", "--preset", "ruler", "--model", "sim:perfect",
                           "--lengths", "4k", "--depths", "0.5", "--reps", "1", "--family", "vt,fwe", "--store",
                           str(tmp_path / "r.sqlite"), "--no-plots", "--no-progress"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith("ruler: qa_1, qa_2 not run")
    assert "RULER effective length (average ≥ 85.6): 4K" in proc.stdout


def test_preset_walks_4k_to_128k_with_no_repeated_prompt(tmp_path, case_requests) -> None:
    """RULER's length walk, each of its six lengths from 4K to 128K, on one task (the
    variable-tracking chains, whose builder grows with the length); every task's prompts and
    scoring at each depth are checked at 4K-8K above (issue 49: the walk on one task, not a
    128K build of all eleven)."""
    assert "vt" in ruler_families()
    result, counts, served = _sweep_over_http("sim:perfect", tmp_path / "r.sqlite", "4k,8k,16k,32k,64k,128k", "0.5", 1,
                                              case_requests, only=frozenset({"vt"}))
    n_cases = 6
    assert served == n_cases and len(counts) == n_cases and set(counts.values()) == {1}
    report = load_report(result.run_id, tmp_path / "r.sqlite")
    assert report.headlines["ruler"].effective_length == 131072
    scores = report.headlines["ruler"].scores
    assert sorted(next(iter(scores.values()))) == [4096, 8192, 16384, 32768, 65536, 131072]
    assert all(v == 100.0 for by in scores.values() for v in by.values())
    recs = list(iter_export(result.run_id, tmp_path / "r.sqlite"))
    assert sorted(r["length"] for r in recs) == [4096, 8192, 16384, 32768, 65536, 131072]
    assert all(r["token_count"] + r["meta"]["tokens_to_generate"] <= r["length"] for r in recs)


def test_a_length_equal_to_the_window_is_accepted_for_ruler_only(tmp_path) -> None:
    """RULER's lengths include the output: L = window fits; niah's L + output does not."""
    from ctxprobe.errors import CtxprobeError

    spec = _preset_spec("sim:perfect?ctx=4096", "4k", "0.5", 1)
    spec = make_spec({**spec.model_dump(), "families": {"vt": {"family": "ruler", "task": "vt"}}})
    result = run_sweep(spec, tmp_path / "a.sqlite", progress=False)
    assert load_report(result.run_id, tmp_path / "a.sqlite").profiles[0].cells[0].mean == 1.0
    from ctxprobe.sweep.packs import load_pack
    from ctxprobe.report.export import export_jsonl

    with open(tmp_path / "pack.jsonl", "w", encoding="utf-8") as fh:
        export_jsonl(result.run_id, tmp_path / "a.sqlite", fh)
    assert [pc.case.max_tokens for pc in load_pack(tmp_path / "pack.jsonl")] == [30]  # vt's budget survives
    short = make_spec({**spec.model_dump(), "model": "sim:perfect?ctx=4095"})  # one token short
    with pytest.raises(CtxprobeError, match="length 4,096 \\(prompt and output\\) exceeds"):
        run_sweep(short, tmp_path / "c.sqlite", progress=False)
    niah = make_spec({**spec.model_dump(), "families": {"niah": {}}})
    with pytest.raises(CtxprobeError, match="exceeds sim:perfect\\?ctx=4096's window"):
        run_sweep(niah, tmp_path / "b.sqlite", progress=False)


def test_plan_counts_each_tasks_own_output_budget() -> None:
    from ctxprobe.plan.grid import summarize

    plan = summarize(_preset_spec("sim:perfect", "4k,8k", "0,1", 1))
    # niah 128 × 8 tasks, vt 30, cwe 120, fwe 50 — per case, 2 lengths × 2 depths
    assert plan.requests == 44 and plan.max_output_tokens == (8 * 128 + 30 + 120 + 50) * 4


def test_servers_counting_more_than_built_are_noted(tmp_path) -> None:
    """A server that closed the answer-prefix turn counts more prompt tokens than were
    built: the report says so (tolerance max(4, 0.5%): +5 of 1000 passes, +6 does not)."""
    from ctxprobe.store import Store

    with Store(tmp_path / "s.sqlite") as store:
        store.ensure_run("r1", model="m", tokenizer="t", family="ruler", version="0",
                         spec={"families": {"vt": {"family": "ruler", "task": "vt"}}, "threshold": 0.856}, meta={})
        for rep, reported in enumerate((1005, 1006, 1000)):
            case = Case(Cell("vt", 1024, 0.5), rep, 0, [{"role": "user", "content": f"q{rep}"}], ["x"],
                        token_count=1000)
            store.save_case("r1", case)
            cut = rep == 2  # one answer hit RULER's own output limit
            store.save_response("r1", case.case_id, StoredResponse(output="x", finish_reason="length" if cut else "stop",
                                reported_prompt_tokens=reported, completion_tokens=1, latency_s=0.1, attempts=1,
                                error=None, score=0.0 if cut else 1.0, outcome="output_truncated" if cut else "correct",
                                detail={}))
        assert store.prompt_overcounts("r1") == (1, 6)
    notes = load_report("r1", tmp_path / "s.sqlite").notes
    assert any(n.startswith("1 response reported more prompt tokens") and "+6" in n for n in notes)
    # the cut-off note names RULER's own budget, not --max-tokens (which does not apply)
    assert any(n.startswith("vt: 1 of 3 answers were cut off by the task's own output limit (RULER's "
                            "tokens_to_generate, 30 tokens)") for n in notes)
