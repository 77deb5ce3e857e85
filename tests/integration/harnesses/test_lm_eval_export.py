"""``ctxprobe export --lm-eval DIR`` and ``ctxprobe import-lm-eval``, without lm-eval itself:
the folder holds the run's exact cases and decoding, its hook scores as the run scored,
and samples written the way lm-eval's ``--log_samples`` writes them (field names as in
lm-evaluation-harness's ``EvaluationTracker``: ``doc``, ``arguments``, ``resps``) import
back into the same per-cell results. The lm-eval run itself: test_lm_eval_e2e.py."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from ctxprobe.cli import main
from ctxprobe.harnesses.lm_eval_hooks import process_results, scored_mean, total
from ctxprobe.spec import make_spec
from ctxprobe.store import iter_export
from ctxprobe.sweep.run import run_sweep

SPEC = {"model": "sim:blind-middle", "tokenizer": "local", "families": {"niah": {}, "vartrack": {}},
        "lengths": [1024, 2048], "depths": [0.0, 0.5, 1.0], "reps": 1, "seed": 5}


class _Loader(yaml.SafeLoader):
    """lm-eval's YAML: ``!function module.name`` names a hook."""


_Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    store = tmp_path_factory.mktemp("lme") / "s.sqlite"
    return store, run_sweep(make_spec(SPEC), store, progress=False).run_id


def _docs(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted(folder.glob("*.jsonl")) for line in f.read_text().splitlines()]


def test_the_folder_holds_the_runs_exact_cases_and_decoding(run, tmp_path: Path, capsys) -> None:
    store, run_id = run
    assert main(["export", run_id, "--store", str(store), "--lm-eval", str(tmp_path / "t")]) == 0
    assert f"--tasks ctxprobe_{run_id}" in capsys.readouterr().err
    configs = {p.stem: yaml.load(p.read_text(), Loader=_Loader) for p in (tmp_path / "t").glob("*.yaml")}
    assert sorted(configs) == [f"ctxprobe_{run_id}_niah", f"ctxprobe_{run_id}_vartrack"]
    for name, cfg in configs.items():
        assert cfg["task"] == name and cfg["tag"] == f"ctxprobe_{run_id}"
        assert cfg["custom_dataset"] == ("function", "utils.load_cases")
        assert cfg["process_results"] == ("function", "utils.process_results")
        assert (tmp_path / "t" / cfg["dataset_kwargs"]["cases"]).is_file()
        assert cfg["doc_to_text"] == "prompt" and cfg["num_fewshot"] == 0
        assert cfg["metadata"]["ctxprobe_run"] == run_id
    stored = {r["case_id"]: r for r in iter_export(run_id, store)}
    limits = {"niah": make_spec(SPEC).decoding.max_tokens}
    assert configs[f"ctxprobe_{run_id}_niah"]["generation_kwargs"] == {
        "until": [], "max_gen_toks": limits["niah"], "temperature": 0.0, "do_sample": False}
    docs = _docs(tmp_path / "t")
    assert sorted(d["case_id"] for d in docs) == sorted(stored)
    for doc in docs:
        rec = stored[doc["case_id"]]
        assert [{"role": "user", "content": doc["prompt"]}] == rec["messages"]  # byte for byte
        assert (doc["token_count"], doc["prompt_hash"], doc["system"]) == (rec["token_count"], rec["prompt_hash"], "")


def test_the_hook_scores_every_case_as_the_run(run, tmp_path: Path) -> None:
    store, run_id = run
    main(["export", run_id, "--store", str(store), "--lm-eval", str(tmp_path / "t")])
    stored = {r["case_id"]: r for r in iter_export(run_id, store)}
    scores = []
    for doc in _docs(tmp_path / "t"):
        got = process_results(doc, [stored[doc["case_id"]]["output"]])
        assert got == {"strict_accuracy": stored[doc["case_id"]]["score"], "harness_failures": 0}
        scores.append(got["strict_accuracy"])
    assert 0 < sum(scores) < len(scores)  # this sim misses some: the comparison can fail
    assert process_results(docs := _docs(tmp_path / "t")[0], []) == {"strict_accuracy": None, "harness_failures": 1}
    assert docs and scored_mean([1.0, None, 0.0]) == 0.5 and total([0, 1, 1]) == 2


def _sample(doc: dict[str, Any], text: str, *, chat: bool = True) -> dict[str, Any]:
    messages = [{"role": "user", "content": doc["prompt"]}]
    arg = json.dumps(messages) if chat else doc["prompt"]
    return {"doc_id": 0, "doc": doc, "target": doc["target"], "arguments": {"gen_args_0": {"arg_0": arg,
            "arg_1": {"until": [], "max_gen_toks": doc["max_tokens"]}}}, "resps": [[text]], "filtered_resps": [text]}


def test_samples_import_as_the_run(run, tmp_path: Path) -> None:
    store, run_id = run
    main(["export", run_id, "--store", str(store), "--lm-eval", str(tmp_path / "t")])
    stored = {r["case_id"]: r for r in iter_export(run_id, store)}
    samples = tmp_path / "samples_x.jsonl"
    samples.write_text("".join(json.dumps(_sample(d, stored[d["case_id"]]["output"])) + "\n"
                               for d in _docs(tmp_path / "t")))
    out = tmp_path / "imported.sqlite"
    assert main(["import-lm-eval", str(samples), "--store", str(out), "--source-store", str(store)]) == 0
    (imported,) = [r for r in _runs(out)]
    cells = defaultdict(list)
    for rec in iter_export(imported, out):
        cells[rec["case_id"]] = [rec["score"], rec["outcome"], rec["token_count"], rec["prompt_hash"]]
    assert cells == {k: [r["score"], r["outcome"], r["token_count"], r["prompt_hash"]] for k, r in stored.items()}


def test_plain_text_requests_are_refused(run, tmp_path: Path, capsys) -> None:
    store, run_id = run
    main(["export", run_id, "--store", str(store), "--lm-eval", str(tmp_path / "t")])
    doc = _docs(tmp_path / "t")[0]
    samples = tmp_path / "samples_y.jsonl"
    samples.write_text(json.dumps(_sample(doc, "x", chat=False)) + "\n")
    assert main(["import-lm-eval", str(samples), "--store", str(tmp_path / "o.sqlite"),
                 "--source-store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "--apply_chat_template" in err and "Traceback" not in err


def test_a_conversation_cannot_be_exported(tmp_path: Path, capsys) -> None:
    store = tmp_path / "m.sqlite"
    spec = {**SPEC, "families": {"mrcr": {}}, "lengths": [2048], "depths": [0.5]}
    run_id = run_sweep(make_spec(spec), store, progress=False).run_id
    assert main(["export", run_id, "--store", str(store), "--lm-eval", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert "conversation" in err and "cannot send this case unchanged" in err.replace("\n", " ")


def _runs(store: Path) -> list[str]:
    from ctxprobe.store import open_existing

    with open_existing(store) as s:
        return [r.run_id for r in s.list_runs()]


def test_a_run_with_reasoning_budgets_cannot_be_exported(tmp_path: Path, capsys) -> None:
    store = tmp_path / "r.sqlite"
    spec = {**SPEC, "model": "sim:reasoner", "families": {"niah": {}}, "lengths": [1024], "depths": [0.5],
            "reasoning_budgets": [0, 256]}
    run_id = run_sweep(make_spec(spec), store, progress=False).run_id
    assert main(["export", run_id, "--store", str(store), "--lm-eval", str(tmp_path / "t")]) == 2
    assert "reasoning budgets" in capsys.readouterr().err and not (tmp_path / "t").exists()
