"""decide --run MODEL... --adaptive: cases go only where they can still change a choice,
and the choices are the fixed grids' (the truth of the sims' documented behaviour)."""

from __future__ import annotations

import json

from decide_sims import PRICED
from ctxprobe.cli import main
from ctxprobe.store import Store


def test_adaptive_decision_spends_only_where_a_choice_can_change(priced_sims, tmp_path, capsys) -> None:
    _fixed_store, prices, _ids = priced_sims
    store = tmp_path / "a.sqlite"
    capsys.readouterr()
    args = ["decide", "--adaptive", "--bands", "2k,4k,8k", "--prices", str(prices), "--store", str(store), "--json"]
    for model in PRICED:
        args += ["--run", model]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(c["band"], c["choice"], c["meets"]) for c in out["choices"]] == [
        (2048, "sim:decay?cliff=3000&width=1", "yes"), (4096, "sim:decay?cliff=6000&width=1", "yes"),
        (8192, "sim:perfect", "yes")]
    with Store(store) as s:
        sent = {r.model: sorted({row.length for row in s.result_rows(r.run_id)}) for r in s.list_runs()}
    # $1: met 2K, failed 4K, then nothing longer; $2: nothing at 2K (met by $1), met 4K, failed 8K;
    # $10: only 8K (2K and 4K were met by cheaper models)
    assert sent == {"sim:decay?cliff=3000&width=1": [2048, 4096], "sim:decay?cliff=6000&width=1": [4096, 8192],
                    "sim:perfect": [8192]}
    # the runs it made read back as adaptive: a length never sent is untested, not a pass
    runs = {r["model"]: r for r in out["runs"]}
    assert runs["sim:perfect"]["adaptive"] and runs["sim:perfect"]["families"]["niah"]["lo"] is None


def test_run_without_adaptive_is_refused_in_one_line(tmp_path, capsys) -> None:
    assert main(["decide", "--run", "sim:perfect", "--bands", "2k", "--store", str(tmp_path / "x.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "--run sends cases: add --adaptive" in err and len(err.strip().splitlines()) == 1
