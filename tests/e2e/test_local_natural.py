"""The embedded model (SmolLM2-135M in process) runs the shipped natural example end to
end: the checked questions among the other documents at 1K and 2K, scored and
reported, and drafting questions from the example through the real provider path."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.store import Store, iter_export

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "natural"
LENGTHS = [1024, 2048]


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def ctxprobe(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """``ctxprobe(*args)``: the CLI's ``main`` in process, in ``tmp_path``, with what it printed."""
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> Done:
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        return Done(code, out.out, out.err)

    return call


def test_local_model_runs_the_shipped_example(tmp_path: Path, ctxprobe) -> None:  # noqa: ANN001
    store = tmp_path / "s.sqlite"
    run = ctxprobe("run", "--model", "local", "--family", "documents",
                    "--param", f"documents.docs={EXAMPLE / 'docs'}", "--param", f"documents.qa={EXAMPLE / 'qa.jsonl'}",
                    "--param", "documents.filler=documents", "--lengths", ",".join(map(str, LENGTHS)),
                    "--depths", "0.5", "--reps", "2", "--max-tokens", "16", "--store", str(store), "--no-plots",
                    "--no-progress")
    assert run.returncode == 0, run.stderr + run.stdout[-3000:]
    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
    recs = list(iter_export(run_id, store))
    assert len(recs) == 2 * len(LENGTHS)
    for r in recs:
        assert r["outcome"] not in (None, "error", "input_truncated"), r
        assert r["token_count"] <= r["length"] and r["reported_prompt_tokens"] == r["token_count"]
        assert r["meta"]["distractor_documents"] and r["meta"]["answer_token_pos"] is not None
    rep = ctxprobe("report", run_id, "--store", str(store), "--json")
    assert rep.returncode == 0, rep.stderr
    (prof,) = json.loads(rep.stdout)["profiles"]
    assert prof["family"] == "documents" and [s["length"] for s in prof["lengths"]] == LENGTHS


def test_local_model_drafts_through_the_checks(tmp_path: Path, ctxprobe) -> None:  # noqa: ANN001
    out = tmp_path / "qa.jsonl"
    args = ("draft-questions", str(EXAMPLE / "docs"), "--model", "local", "-o", str(out), "--n", "4",
            "--per-passage", "2", "--draft-tokens", "96", "--no-progress")
    run = ctxprobe(*args)
    assert run.returncode == 0, run.stderr + run.stdout[-3000:]
    assert "kept" in run.stdout and (tmp_path / "qa.calls.jsonl").exists()
    kept = [json.loads(x) for x in out.read_text().splitlines()]
    rejected = [json.loads(x) for x in (tmp_path / "qa.rejected.jsonl").read_text().splitlines()]
    assert len(kept) + len(rejected) <= 4
    for r in rejected:
        assert r["reasons"]
    again = ctxprobe(*args)
    assert again.returncode == 0 and "0 sent" in again.stdout
