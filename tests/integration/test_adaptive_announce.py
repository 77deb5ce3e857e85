"""``run --adaptive`` sends its cases in rounds, each a sweep of the same run: the inferred
tokenizer is said once for the run, not once per round."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.store import Store


def test_the_inferred_tokenizer_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "a.sqlite"
    assert main(["run", "--adaptive", "--model", "sim:perfect", "--lengths", "1k,2k", "--depths", "0,1",
                 "--store", str(store), "--no-plots", "--no-progress"]) in (0, 3)
    err = capsys.readouterr().err
    with Store(store) as s:
        (run,) = s.list_runs()
    assert run.meta.adaptive is not None and run.meta.adaptive["rounds"] > 1  # several rounds were sent
    assert err.count("(inferred from the model") == 1, err
