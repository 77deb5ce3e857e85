"""ctxprobe's inspect_ai tasks run by inspect itself (the ``inspect`` extra), offline:

- ``inspect eval ctxprobe/niah --model openai-api/sim/blind`` (the CLI, finding the task
  through the ``inspect_ai`` entry point) against ``serve-sim`` on loopback, through
  inspect's OpenAI-compatible provider (base URL and key from ``SIM_BASE_URL`` /
  ``SIM_API_KEY``: inspect_ai's ``OpenAICompatibleAPI`` reads ``<SERVICE>_BASE_URL``);
  ``ctxprobe import-inspect`` of its log gives the per-cell accuracies and effective length
  of ``ctxprobe run`` on the same spec and server, and the log's case ids, token counts
  and scores are ctxprobe's;
- inspect's ``mockllm`` whose replies come from a sim reading each prompt.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from ctxprobe.cli import main  # noqa: E402
from ctxprobe.harnesses.cases import HarnessCases, harness_spec  # noqa: E402
from ctxprobe.models import resolve_provider  # noqa: E402
from ctxprobe.models.base import GenerateRequest  # noqa: E402
from ctxprobe.sim.server import SimServer  # noqa: E402
from ctxprobe.report.load import load_report  # noqa: E402
from ctxprobe.store import iter_export, open_existing  # noqa: E402
from ctxprobe.tokenizers import resolve_tokenizer  # noqa: E402

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


def _cells(store: Path, run_id: str) -> dict[tuple[int, float], list[float]]:
    cells: dict[tuple[int, float], list[float]] = defaultdict(list)
    for rec in iter_export(run_id, store):
        if rec["score"] is not None:
            cells[(rec["length"], rec["depth"])].append(rec["score"])
    return {k: sorted(v) for k, v in cells.items()}


def _runs(store: Path) -> dict[str, str]:
    with open_existing(store) as s:
        return {r.model: r.run_id for r in s.list_runs()}


def test_inspect_eval_against_serve_sim_imports_as_ctxprobe_run(tmp_path: Path) -> None:
    tok = resolve_tokenizer("local")
    store = tmp_path / "s.sqlite"
    with SimServer(resolve_provider("sim:blind-middle", tok), tok) as server:
        url = server.start()
        env = {**os.environ, "SIM_BASE_URL": url, "SIM_API_KEY": "sim-key", "INSPECT_LOG_DIR": str(tmp_path / "logs")}
        done = subprocess.run([str(BIN / "inspect"), "eval", "ctxprobe/niah", "-T", "lengths=1k,2k", "-T", "reps=2",
                               "-T", "depths=0,0.5,1", "--model", "openai-api/sim/blind", "--display", "none",
                               "--log-format", "eval"], env=env, capture_output=True, text=True, timeout=600,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert main(["run", "--model", "openai-api/blind", "--base-url", url, "--family", "niah", "--lengths", "1k,2k",
                     "--reps", "2", "--depths", "0,0.5,1", "--store", str(store), "--no-plots",
                     "--no-progress"]) == 0
        (log,) = (tmp_path / "logs").glob("*.eval")
        assert main(["import-inspect", str(log), "--store", str(store)]) == 0
        harness = HarnessCases(harness_spec("niah", model=f"openai-compat:blind@{url}",
                                            tokenizer=f"endpoint:{url}?model=blind", lengths="1k,2k",
                                            depths="0,0.5,1", reps=2), f"endpoint:{url}?model=blind")
        expected = harness.cases
    runs = _runs(store)
    imported, ran = runs["inspect:openai-api/sim/blind"], runs[f"openai-compat:blind@{url}"]
    assert _cells(store, imported) == _cells(store, ran)
    assert len({sum(v) for v in _cells(store, ran).values()}) > 1  # the sim loses the middle: cells differ
    assert load_report(imported, store).intervals["niah"].line() == load_report(ran, store).intervals["niah"].line()
    stored = {r["case_id"]: r for r in iter_export(ran, store)}
    log_data = inspect_ai.log.read_eval_log(str(log))
    assert sorted(str(s.id) for s in log_data.samples) == sorted(stored)
    for sample in log_data.samples:
        rec, case = stored[str(sample.id)], expected[str(sample.id)]
        assert sample.metadata["token_count"] == rec["token_count"] == case.token_count
        assert sample.metadata["prompt_hash"] == rec["prompt_hash"]
        (score,) = sample.scores.values()
        assert (score.value, score.metadata["outcome"]) == (rec["score"], rec["outcome"])
    metrics = {name: m.value for s in log_data.results.scores for name, m in s.metrics.items()}
    assert metrics["strict_accuracy"] == pytest.approx(sum(r["score"] for r in stored.values()) / len(stored))
    for depth in (0.0, 0.5, 1.0):
        mine = [r["score"] for r in stored.values() if r["depth"] == depth]
        assert metrics[f"depth {depth}"] == pytest.approx(sum(mine) / len(mine))
    # no regression found (the slice is too small to show every drop: INCONCLUSIVE, passed on request)
    assert main(["check", imported, "--baseline", ran, "--store", str(store), "--allow-inconclusive"]) == 0


def _sim_reader():
    """mockllm's custom outputs: sim:first-half reads each prompt (never the answer key)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    tok = resolve_tokenizer("local")
    sim = resolve_provider("sim:first-half", tok)
    pool = concurrent.futures.ThreadPoolExecutor(1)

    def reply(messages, tools, tool_choice, config):
        chat = [{"role": m.role, "content": m.text} for m in messages]
        request = GenerateRequest(messages=chat, max_tokens=config.max_tokens or 48)
        result = pool.submit(asyncio.run, sim.generate(request)).result()
        output = ModelOutput.from_content(model="mockllm", content=result.text)
        # the sim's own count of the prompt (mockllm would count with tiktoken, downloading it)
        output.usage = ModelUsage(input_tokens=result.prompt_tokens or 0, output_tokens=result.completion_tokens or 0,
                                  total_tokens=(result.prompt_tokens or 0) + (result.completion_tokens or 0))
        return output

    return reply


def test_mockllm_reading_the_prompt(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    model = get_model("mockllm/model", custom_outputs=_sim_reader(), memoize=False)
    # by name, as `inspect eval ctxprobe/niah -T ...` names it: the task is made for the model
    (log,) = inspect_eval("ctxprobe/niah", model=model, log_dir=str(tmp_path / "logs"), display="none",
                          task_args={"lengths": "1k,2k", "depths": "0,1", "reps": 2, "tokenizer": "local",
                                     "distractors": 2})
    assert log.status == "success", log.error
    harness = HarnessCases(harness_spec("niah", model="local", tokenizer="local", lengths="1k,2k", depths="0,1",
                                        reps=2, params={"distractors": 2}), "local")
    seen = {}
    for sample in log.samples:
        case = harness.cases[str(sample.id)]
        assert sample.metadata["token_count"] == case.token_count == sample.output.usage.input_tokens
        (score,) = sample.scores.values()
        want, label = harness.score(_reply(sample))
        assert (score.value, score.metadata["outcome"]) == (want, label.outcome)
        seen[str(sample.id)] = want
    assert sorted(seen) == sorted(harness.cases)
    assert 0 < sum(seen.values()) < len(seen)  # the first half is read, the second not: both outcomes
    store = tmp_path / "m.sqlite"
    assert main(["import-inspect", log.location, "--store", str(store)]) == 0
    (run_id,) = _runs(store).values()
    assert {r["case_id"]: r["score"] for r in iter_export(run_id, store)} == seen
    with open_existing(store) as s:
        run = s.require_run(run_id)
    assert (run.model, run.tokenizer, run.meta.extra["imported_from"]) == ("inspect:mockllm/model", "local", "inspect")


def _reply(sample):
    from ctxprobe.harnesses.inspect_log import reply_of

    return reply_of(str(sample.id), sample.output, sample.error)


def test_prompts_cut_by_the_server_stay_out_of_inspects_accuracy(tmp_path: Path) -> None:
    """serve-sim --truncate-to 1536: every 2K prompt is cut (the server reports fewer prompt
    tokens than built), so those samples are input_truncated, uncounted, and the metrics
    are the 1K cases' alone, as ctxprobe leaves truncated prompts out of accuracy."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok, truncate_to=1536) as server:
        url = server.start()
        model = get_model("openai-api/sim/perfect", base_url=url, api_key="sim-key", memoize=False)
        (log,) = inspect_eval("ctxprobe/niah", model=model, log_dir=str(tmp_path / "logs"), display="none",
                              task_args={"lengths": "1k,2k", "depths": "0,1", "reps": 1})
        assert main(["import-inspect", log.location, "--store", str(tmp_path / "t.sqlite")]) == 0
    outcomes = {str(s.id): next(iter(s.scores.values())).metadata["outcome"] for s in log.samples}
    assert outcomes == {"niah/L1024/d0/r0": "correct", "niah/L1024/d1/r0": "correct",
                        "niah/L2048/d0/r0": "input_truncated", "niah/L2048/d1/r0": "input_truncated"}
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    assert metrics["strict_accuracy"] == 1.0 and metrics["harness_failures"] == 2.0
    assert metrics["length 1024"] == 1.0 and metrics["length 2048"] != metrics["length 2048"]  # nan: none scored
    (run_id,) = _runs(tmp_path / "t.sqlite").values()
    report = load_report(run_id, tmp_path / "t.sqlite")
    assert [s.length for s in report.profiles[0].lengths if s.n] == [1024]


def test_a_log_of_another_task_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    def answer(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(model="mockllm", content="no")
        out.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
        return out

    model = get_model("mockllm/model", custom_outputs=answer, memoize=False)
    (log,) = inspect_eval(Task(dataset=[Sample(input="hi", target="x")], solver=[generate()], name="niah"),
                          model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert main(["import-inspect", log.location, "--store", str(tmp_path / "x.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "task 'niah', not of a ctxprobe task" in err and "Traceback" not in err
    assert not (tmp_path / "x.sqlite").exists()


def test_a_log_of_several_epochs_is_refused(tmp_path: Path, capsys) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    model = get_model("mockllm/model", custom_outputs=_sim_reader(), memoize=False)
    (log,) = inspect_eval("ctxprobe/niah", model=model, log_dir=str(tmp_path / "logs"), display="none", epochs=2,
                          task_args={"lengths": "1k", "depths": "0", "reps": 1, "tokenizer": "local"})
    assert main(["import-inspect", log.location, "--store", str(tmp_path / "e.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "2 epochs" in err and "-T reps=N" in " ".join(err.split())
