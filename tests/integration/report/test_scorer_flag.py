"""``report --scorer NAME`` takes any family whose report hooks score on their own; the
CLI lists none itself: the header names the scorer by its hooks' ``scorer_label``, and an
unknown name is one line naming the families that have one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep


def test_the_scorer_is_named_by_its_family(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "families": {"niah": {}}, "lengths": [512],
                      "depths": [0.0, 1.0], "reps": 1})
    rid = run_sweep(spec, store, progress=False).run_id
    capsys.readouterr()
    assert main(["report", rid, "--store", str(store), "--scorer", "ruler", "--no-plots"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "scorer ruler (RULER string match, re-scored)" in out
    assert main(["report", rid, "--store", str(store), "--no-plots"]) == 0
    assert "re-scored" not in capsys.readouterr().out
    assert main(["report", rid, "--store", str(store), "--scorer", "bogus", "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "unknown scorer 'bogus': use strict (default) or ruler" in err and "Traceback" not in err
