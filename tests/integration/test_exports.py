"""Exports (CSV, Parquet, RULER JSONL), instance-pack round trip, terminal failures, redaction."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from rich.console import Console

from ctxprobe.errors import CtxprobeError
from ctxprobe.sweep.packs import load_pack, run_pack
from ctxprobe.core.records import CaseRecord
from ctxprobe.report.evidence import failure_of
from ctxprobe.report.export import COLUMNS, write_csv, write_pack, write_parquet, write_ruler_jsonl
from ctxprobe.report.failures import EVIDENCE_STYLE, excerpt_text, render_failures
from ctxprobe.report.redact import redact, redact_obj
from ctxprobe.store import iter_export
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep

MODEL = "sim:decay?cliff=600&width=1200"  # deterministic: same prompt, same answer


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, str, int]:
    store = tmp_path_factory.mktemp("exp") / "s.sqlite"
    spec = make_spec({"model": MODEL, "lengths": "512,1k,2k", "depths": "0,0.5,1", "reps": 2,
                      "families": {"niah": {"distractors": 2}}})
    result = run_sweep(spec, store, progress=False)
    return store, result.run_id, 18


def _by_case(store: Path, run_id: str) -> dict[str, dict]:
    return {r["case_id"]: r for r in iter_export(run_id, store)}


def test_csv_one_row_per_case(run, tmp_path) -> None:
    store, run_id, n = run
    assert write_csv(run_id, store, tmp_path / "c.csv") == n
    with open(tmp_path / "c.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == n and list(rows[0]) == list(COLUMNS)
    assert {r["outcome"] for r in rows} >= {"correct", "distractor"}
    assert json.loads(rows[0]["expected"]) and rows[0]["prompt_hash"]


def test_parquet_one_row_per_case(run, tmp_path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    store, run_id, n = run
    assert write_parquet(run_id, store, tmp_path / "c.parquet", batch=7) == n  # several batches
    table = pq.read_table(tmp_path / "c.parquet")
    assert table.num_rows == n and table.column_names == list(COLUMNS)
    assert str(table.schema.field("length").type) == "int64"


def test_pack_round_trip_identical_prompts_and_outcomes(run, tmp_path) -> None:
    store, run_id, n = run
    pack = tmp_path / "cases.jsonl"
    assert write_pack(run_id, store, pack) == n
    fresh = tmp_path / "fresh.sqlite"
    result = run_pack(pack, MODEL, fresh)
    assert result.sent == n and not result.resumed
    before, after = _by_case(store, run_id), _by_case(fresh, result.run_id)
    assert set(before) == set(after)
    for case_id, old in before.items():
        new = after[case_id]
        assert new["prompt_hash"] == old["prompt_hash"] and new["messages"] == old["messages"]
        assert (new["outcome"], new["output"], new["token_count"]) == (old["outcome"], old["output"],
                                                                       old["token_count"])
    again = run_pack(pack, MODEL, fresh)  # same pack, same model: resumes, sends nothing
    assert again.resumed and again.sent == 0 and again.run_id == result.run_id


def test_pack_errors_name_the_line(run, tmp_path) -> None:
    store, run_id, _ = run
    pack = tmp_path / "cases.jsonl"
    write_pack(run_id, store, pack)
    lines = pack.read_text(encoding="utf-8").splitlines()
    tampered = json.loads(lines[2])
    tampered["messages"][0]["content"] += " extra"
    (tmp_path / "bad.jsonl").write_text("\n".join([lines[0], lines[1], json.dumps(tampered)]) + "\n")
    with pytest.raises(CtxprobeError, match="line 3.*prompt_hash"):
        load_pack(tmp_path / "bad.jsonl")
    (tmp_path / "junk.jsonl").write_text(lines[0] + "\n{not json\n")
    with pytest.raises(CtxprobeError, match="line 2"):
        load_pack(tmp_path / "junk.jsonl")
    other = [json.loads(x) | {"chat_template_hash": "0000000000000000"} for x in lines]
    (tmp_path / "tmpl.jsonl").write_text("".join(json.dumps(x) + "\n" for x in other))
    with pytest.raises(CtxprobeError, match="--tokenizer"):
        run_pack(tmp_path / "tmpl.jsonl", MODEL, tmp_path / "x.sqlite")


def test_ruler_format(run, tmp_path) -> None:
    store, run_id, n = run
    assert write_ruler_jsonl(run_id, store, tmp_path / "r.jsonl") == n
    recs = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()]
    ours = list(iter_export(run_id, store))
    assert [r["index"] for r in recs] == list(range(n))
    for r, rec in zip(recs, ours):
        assert set(r) == {"index", "input", "outputs", "length", "length_w_model_temp", "answer_prefix",
                          "token_position_answer", "others"}
        assert r["input"] == rec["messages"][0]["content"] and r["outputs"] == rec["expected"]
        assert r["length"] == rec["token_count"] and r["others"]["case_id"] == rec["case_id"]


def test_failures_terminal_highlights_evidence_and_keeps_output_plain(run) -> None:
    store, run_id, _ = run
    rec = next(r for r in iter_export(run_id, store) if r["outcome"] == "distractor")
    with Store(store) as s, s.db:  # a reply carrying console markup must print literally
        # (written in place: the store itself never replaces a final response)
        s.db.execute("UPDATE responses SET output=? WHERE run_id=? AND case_id=?",
                     ("[bold red]5[/] [link=x]y[/link] " + rec["distractors"][0], run_id, rec["case_id"]))
    console = Console(record=True, width=120, color_system="truecolor", force_terminal=True)
    shown = render_failures(run_id, store, console, outcome="distractor", n=50)
    text = console.export_text()
    assert shown > 0 and "[bold red]5[/] [link=x]y[/link]" in text
    assert rec["meta"]["key"] in text and "prompt around the target evidence" in text
    failure = failure_of(CaseRecord.from_json(rec))
    styled = excerpt_text(failure.excerpts[0])
    marked = [styled.plain[s.start:s.end] for s in styled.spans if s.style == EVIDENCE_STYLE]
    assert rec["meta"]["needle"] in marked
    with pytest.raises(CtxprobeError, match="unknown outcome"):
        render_failures(run_id, store, console, outcome="nonsense")


def test_failures_cli_says_none_once(run, capsys: pytest.CaptureFixture[str]) -> None:
    """An outcome no case has: one line on stdout, nothing repeated on stderr."""
    from ctxprobe.cli import main

    store, run_id, _ = run
    assert main(["failures", run_id, "--outcome", "refusal", "--store", str(store)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == f"no 'refusal' failures in run {run_id}" and captured.err == ""


def test_redaction() -> None:
    redacted = redact("openai-compat:m@https://u:p@h:1/v1?token=T&x=1")
    assert redacted == "openai-compat:m@https://h:1/v1?token=REDACTED&x=1"
    assert redact("sim:decay?cliff=600") == "sim:decay?cliff=600"  # not a URL: untouched
    meta = redact_obj({"api_key": "k", "max_tokens": 4, "token_count": 5, "nested": ["http://a:b@c/"]})
    assert meta == {"api_key": "REDACTED", "max_tokens": 4, "token_count": 5, "nested": ["http://c/"]}
