"""Replies imported from other harnesses go through the store's one write path, which
scrubs API keys: a key a model echoed in an inspect_ai log or an lm-eval samples file
never reaches the store file, ``export``, the report or the HTML page.

The inspect log is written by inspect_ai's own ``write_eval_log`` (its ``EvalLog`` /
``EvalSample`` / ``ModelOutput`` types); the samples file has lm-eval's ``--log_samples``
fields (``doc``, ``arguments``, ``resps``) as tests/integration/harnesses/test_lm_eval_export.py writes
them. The keys have each provider's shape (redaction.py's ``sk-…`` and ``AIza…``), plus one
of no known shape handed through ``CTXPROBE_API_KEY``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.cli import main
from ctxprobe.harnesses.cases import HarnessCases, harness_spec
from ctxprobe.harnesses.inspect_log import MODEL_KEY, SPEC_KEY, TOKENIZER_KEY
from ctxprobe.redaction import forget_registered_secrets
from ctxprobe.spec import make_spec
from ctxprobe.store import iter_export, open_existing
from ctxprobe.sweep.run import run_sweep

#: name → a key of that provider's shape (made up: no real key).
KEYS = {
    "openai": "sk-proj-Q7v2LmX9pR4tW8zK1nB6cJ3hD5fG0aYe",
    "anthropic": "sk-ant-api03-Zt8Hq2Wm5Rk9Lp3Nx7Vb1Cd4Fg6Jy0Ts-AbCdEf",
    "google": "AIzaSyD4k9Lm2Qw8Er5Ty1Ui7Op3As6Df0GhJkZ",
    "env": "ctxk-0aB9cD8eF7gH6iJ5kL4mN3",  # no provider's shape: known only from the environment
}


def _leaky(answer: str, i: int) -> str:
    name = sorted(KEYS)[i % len(KEYS)]
    return f"The value is {answer}.\nAuthorization: Bearer {KEYS[name]} (key {name})"


def _pieces() -> list[str]:
    """Each key whole and a distinctive slice of its body (a key cut short still leaks)."""
    return [s for key in KEYS.values() for s in (key, key[-14:])]


def _assert_clean(where: str, data: bytes | str) -> None:
    blob = data if isinstance(data, bytes) else data.encode()
    found = [p for p in _pieces() if p.encode() in blob]
    assert not found, f"{where} holds {found}"


def _assert_nothing_leaks(store: Path, run_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = list(iter_export(run_id, store))
    assert recs and all(r["outcome"] is not None for r in recs)
    assert any("***" in (r["output"] or "") for r in recs)  # the replies were stored, their keys masked
    assert any(r["outcome"] == "correct" for r in recs)  # the answer itself survives the scrub
    capsys.readouterr()
    assert main(["export", run_id, "--store", str(store), "-o", str(tmp_path / "e.jsonl")]) == 0
    _assert_clean("export", (tmp_path / "e.jsonl").read_bytes())
    assert main(["report", run_id, "--store", str(store), "--json"]) == 0
    assert main(["report", run_id, "--store", str(store), "--failures", "20"]) == 0
    _assert_clean("report", capsys.readouterr().out)
    assert main(["report", run_id, "--store", str(store), "--html", str(tmp_path / "r.html"), "--failures", "20"]) == 0
    _assert_clean("html", (tmp_path / "r.html").read_bytes())
    with open_existing(store) as s:  # fold the WAL into the file: the bytes read are all there is
        s.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _assert_clean("store file", store.read_bytes())


@pytest.fixture(autouse=True)
def _env_key(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("CTXPROBE_API_KEY", KEYS["env"])
    yield
    forget_registered_secrets()


def test_an_inspect_log_s_keys_never_reach_the_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inspect_log = pytest.importorskip("inspect_ai.log")
    from inspect_ai.model import ChatMessageUser, ModelOutput

    spec = harness_spec("niah", model="sim:perfect", tokenizer="local", lengths="1k", depths="0,1", reps=2, seed=4)
    harness = HarnessCases(spec, "local")
    samples = []
    for i, case in enumerate(harness.cases.values()):
        out = ModelOutput.from_content(model="m", content=_leaky(case.expected[0], i))
        samples.append(inspect_log.EvalSample(
            id=case.case_id, epoch=1, input=[ChatMessageUser(content=m["content"]) for m in case.messages],
            target=list(case.expected), output=out, metadata=harness.sample_metadata(case)))
    log = inspect_log.EvalLog(
        eval=inspect_log.EvalSpec(created="2026-01-01T00:00:00+00:00", task="ctxprobe/niah", model="openai/m",
                                  dataset=inspect_log.EvalDataset(name="ctxprobe-niah"),
                                  config=inspect_log.EvalConfig(),
                                  metadata={SPEC_KEY: spec.model_dump(mode="json"), TOKENIZER_KEY: "local",
                                            MODEL_KEY: "openai/m"}),
        status="success", samples=samples)
    path = tmp_path / "log.json"
    inspect_log.write_eval_log(log, str(path), format="json")
    assert KEYS["anthropic"] in path.read_text()  # the log itself holds the keys
    store = tmp_path / "s.sqlite"
    assert main(["import-inspect", str(path), "--store", str(store)]) == 0
    with open_existing(store) as s:
        (run,) = s.list_runs()
    _assert_nothing_leaks(store, run.run_id, tmp_path, capsys)


def test_an_lm_eval_samples_file_s_keys_never_reach_the_store(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "src.sqlite"
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "families": {"niah": {}}, "lengths": [1024],
                      "depths": [0.0, 1.0], "reps": 2, "seed": 4})
    run_id = run_sweep(spec, source, progress=False).run_id
    assert main(["export", run_id, "--store", str(source), "--lm-eval", str(tmp_path / "t")]) == 0
    docs = [json.loads(line) for f in sorted((tmp_path / "t").glob("*.jsonl")) for line in f.read_text().splitlines()]
    stored = {r["case_id"]: r for r in iter_export(run_id, source)}
    lines = []
    for i, doc in enumerate(docs):
        text = _leaky(stored[doc["case_id"]]["expected"][0], i)
        arg = json.dumps([{"role": "user", "content": doc["prompt"]}])
        lines.append(json.dumps({"doc_id": i, "doc": doc, "target": doc["target"], "arguments": {"gen_args_0": {
            "arg_0": arg, "arg_1": {"until": [], "max_gen_toks": doc["max_tokens"]}}},
            "resps": [[text]], "filtered_resps": [text]}) + "\n")
    samples = tmp_path / "samples_niah.jsonl"
    samples.write_text("".join(lines))
    out = tmp_path / "imported.sqlite"
    assert main(["import-lm-eval", str(samples), "--store", str(out), "--source-store", str(source)]) == 0
    with open_existing(out) as s:
        (run,) = s.list_runs()
    _assert_nothing_leaks(out, run.run_id, tmp_path, capsys)
