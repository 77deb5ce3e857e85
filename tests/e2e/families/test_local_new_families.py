"""The embedded model (SmolLM2-135M in process) on the three 2025 families at 1K:
every case answered and scored (no harness failure), the families' report extras built
from real replies. The same runs at 1K, 2K and 4K, printing the numbers in
docs/measurements.md, are ``benchmarks/local_new_families.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.report.load import report_json
from ctxprobe.store import Store

pytestmark = pytest.mark.slow

#: the families' settings, shared with benchmarks/local_new_families.py
RUNS = {
    "updates": ["--param", "updates.keys=2", "--param", "updates.updates=3,10"],
    "longout": ["--param", "longout.answer_tokens=100,150", "--reps", "2"],
    "instructions": ["--param", "instructions.count=1,3", "--param", "instructions.placement=both"],
}


@pytest.mark.parametrize("family", sorted(RUNS))
def test_local_model_profile(family: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    args = RUNS[family] if "--reps" in RUNS[family] else [*RUNS[family], "--reps", "1"]
    code = main(["run", "--model", "local", "--family", family, *args, "--lengths", "1k",
                 "--depths", "0.5", "--store", str(store), "--no-plots", "--no-progress"])
    assert code == 0
    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
        recs = list(s.iter_case_records(run_id))
    assert len(recs) == int(args[args.index("--reps") + 1])
    assert all(r["outcome"] not in ("error", "input_truncated") for r in recs)
    report = report_json([run_id], store)
    extra = report[family][family]
    with capsys.disabled():
        print(f"\n{family}: " + json.dumps({"lengths": [(x["length"], x["mean"], x["n"])
                                                       for x in report["profiles"][0]["lengths"]],
                                            "outcomes": sorted({str(r["outcome"]) for r in recs}), "extra": extra}))
