"""The harness commands' user errors: one line naming what to do, exit 2, nothing stored."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from ctxprobe.cli import main


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return " ".join(err.split())


def test_import_inspect_of_a_missing_log(tmp_path: Path, capsys) -> None:
    assert main(["import-inspect", str(tmp_path / "nope.eval"), "--store", str(tmp_path / "s.sqlite")]) == 2
    err = _one_line(capsys)
    if importlib.util.find_spec("inspect_ai") is None:  # a plain install: the extra is named
        assert "pip install 'ctxprobe[inspect]'" in err
    else:
        assert "no inspect log at" in err
    assert not (tmp_path / "s.sqlite").exists()


def test_import_lm_eval_of_other_samples(tmp_path: Path, capsys) -> None:
    samples = tmp_path / "samples_gsm8k.jsonl"
    samples.write_text(json.dumps({"doc_id": 0, "doc": {"question": "1+1?"}, "resps": [["2"]]}) + "\n")
    assert main(["import-lm-eval", str(samples), "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "names no ctxprobe case" in _one_line(capsys)
    samples.write_text("{not json\n")
    assert main(["import-lm-eval", str(samples), "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "line 1 is not JSON" in _one_line(capsys)
    assert main(["import-lm-eval", str(tmp_path / "none.jsonl"), "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "no lm-eval samples file" in _one_line(capsys)
    assert not (tmp_path / "s.sqlite").exists()


def test_export_lm_eval_of_an_unknown_run(tmp_path: Path, capsys) -> None:
    assert main(["export", "abc", "--store", str(tmp_path / "none.sqlite"), "--lm-eval", str(tmp_path / "t")]) == 2
    assert "no store at" in _one_line(capsys)
    assert not (tmp_path / "t").exists()
