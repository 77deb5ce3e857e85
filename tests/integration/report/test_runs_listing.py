"""``ctxprobe runs``: a run with a noise floor lists its families, not their twins."""

from __future__ import annotations

import json

import pytest

from ctxprobe.cli import main
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep


def test_runs_lists_families_and_marks_the_noise_floor(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    store = tmp_path / "s.sqlite"
    base = {"model": "sim:perfect", "tokenizer": "local", "lengths": "512", "depths": "0,1", "reps": 1,
            "families": "niah,vartrack"}
    floored = run_sweep(make_spec({**base, "baseline": "no-context"}), store, progress=False).run_id
    plain = run_sweep(make_spec(base), store, progress=False).run_id
    with Store(store) as s:  # what is stored: the twins are labels of the run
        stored = {r.run_id: r.family for r in s.list_runs()}
    assert "niah@no-context" in stored[floored] and "@" not in stored[plain]

    assert main(["runs", "--store", str(store)]) == 0
    text = capsys.readouterr().out
    assert "@no-context" not in text and max(len(line) for line in text.splitlines()) <= 80
    assert "noise floor" in text  # folded onto a second line at 80 columns
    monkeypatch.setenv("COLUMNS", "160")  # one line per run
    assert main(["runs", "--store", str(store)]) == 0
    text = capsys.readouterr().out
    rows = {line.split()[0]: line for line in text.splitlines() if line[:7] in (floored[:7], plain[:7])}
    assert "niah, vartrack + noise floor" in rows[floored[:7]]
    assert "niah, vartrack" in rows[plain[:7]] and "floor" not in rows[plain[:7]]

    assert main(["runs", "--json", "--store", str(store)]) == 0
    listed = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed[floored]["family"] == "niah,vartrack" and listed[floored]["baseline"] == "no-context"
    assert listed[plain]["family"] == "niah,vartrack" and "baseline" not in listed[plain]
