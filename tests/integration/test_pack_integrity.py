"""Instance packs carry a content hash: an edited pack is refused (or, on request, is a run
of its own), and a refused pack writes nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.sweep.packs import run_pack
from ctxprobe.report.export import write_pack
from ctxprobe.store import iter_export
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

MODEL = "sim:perfect"


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("pack")
    spec = make_spec({"model": MODEL, "tokenizer": "local", "lengths": "512", "depths": "0,1", "reps": 2,
                      "families": {"niah": {"distractors": 1}}})
    result = run_sweep(spec, d / "src.sqlite", progress=False)
    write_pack(result.run_id, d / "src.sqlite", d / "pack.jsonl")
    return d / "pack.jsonl"


def _edited(pack: Path, out: Path, line: int, change) -> Path:
    rows = [json.loads(x) for x in pack.read_text(encoding="utf-8").splitlines()]
    change(rows[line - 1])
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return out


def _runs(store: Path) -> list[str]:
    return [r for (r,) in sqlite3.connect(store).execute("SELECT run_id FROM runs")] if store.exists() else []


@pytest.mark.parametrize("what, change", [
    ("expected", lambda r: r.update(expected=["1111111"])),
    ("distractors", lambda r: r.update(distractors=[])),
    ("scorer parameter", lambda r: r["meta"].update(match="contains")),
    ("token count", lambda r: r.update(token_count=r["token_count"] - 1)),
    ("no hash", lambda r: r.pop("content_hash")),
])
def test_an_edited_line_is_refused_and_nothing_is_written(pack, tmp_path, what, change) -> None:
    bad = _edited(pack, tmp_path / "bad.jsonl", 3, change)
    store = tmp_path / "s.sqlite"
    with pytest.raises(CtxprobeError) as info:
        run_pack(bad, MODEL, store)
    assert "line 3" in str(info.value) and "--allow-edited-pack" in str(info.value) and "\n" not in str(info.value)
    assert not store.exists()


def test_the_issue_finding_tampered_answer_key_then_genuine_pack(pack, tmp_path) -> None:
    """Found: an edited `expected` was accepted and scored against the edit, and the genuine
    pack then resumed the tampered run (same run id)."""
    store = tmp_path / "s.sqlite"
    original = [json.loads(x) for x in pack.read_text(encoding="utf-8").splitlines()]
    bad = _edited(pack, tmp_path / "bad.jsonl", 1, lambda r: r.update(expected=["1111111"]))
    with pytest.raises(CtxprobeError):
        run_pack(bad, MODEL, store)
    assert _runs(store) == []
    # asked for explicitly, the edited pack runs as a run of its own, marked as edited
    edited = run_pack(bad, MODEL, store, allow_edited=True)
    genuine = run_pack(pack, MODEL, store)
    assert edited.run_id != genuine.run_id and not genuine.resumed and genuine.sent == len(original)
    scored = {r["case_id"]: r for r in iter_export(genuine.run_id, store)}
    assert all(r["outcome"] == "correct" for r in scored.values())  # against the real answer key
    tampered = {r["case_id"]: r for r in iter_export(edited.run_id, store)}
    assert tampered[original[0]["case_id"]]["expected"] == ["1111111"]
    meta = json.loads(sqlite3.connect(store).execute("SELECT meta_json FROM runs WHERE run_id=?",
                                                     (edited.run_id,)).fetchone()[0])
    assert meta["pack"]["edited_lines"] == 1


def test_a_bad_token_count_writes_no_run_row(pack, tmp_path) -> None:
    """Found: a pack refused for a bad token count still left a run row (running, 0/0)."""
    store = tmp_path / "s.sqlite"
    first = run_pack(pack, MODEL, store)
    bad = _edited(pack, tmp_path / "count.jsonl", 4, lambda r: r.update(token_count=r["token_count"] + 5))
    with pytest.raises(CtxprobeError, match="line 4.*tokens"):
        run_pack(bad, MODEL, store, allow_edited=True)  # past the hash check, stopped by the count
    assert _runs(store) == [first.run_id]


def test_cli_refuses_an_edited_pack_in_one_line(pack, tmp_path, capsys) -> None:
    bad = _edited(pack, tmp_path / "bad.jsonl", 2, lambda r: r.update(expected=["2222222"]))
    code = main(["run", "--cases", str(bad), "--model", MODEL, "--store", str(tmp_path / "c.sqlite"),
                 "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and "line 2" in err and "Traceback" not in err
    assert not (tmp_path / "c.sqlite").exists()
