"""The embedded model (SmolLM2-135M in process) on ``updates``, ``longout`` and
``instructions`` at 1K, 2K and 4K: the runs behind docs/measurements.md's table. Prints each
family's profile, outcomes and report extra. Slow (about 16 minutes on 2 shared cores), so
not part of the suite: ``tests/e2e/families/test_local_new_families.py`` checks the same
runs at 1K.

    PYTHONPATH=src .venv/bin/python benchmarks/local_new_families.py [FAMILY ...]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from ctxprobe.cli import main
from ctxprobe.report.load import report_json
from ctxprobe.store import Store

#: the families' settings: the same as the suite's test at 1K
RUNS = {
    "updates": ["--param", "updates.keys=2", "--param", "updates.updates=3,10", "--reps", "1"],
    "longout": ["--param", "longout.answer_tokens=100,150", "--reps", "2"],
    "instructions": ["--param", "instructions.count=1,3", "--param", "instructions.placement=both", "--reps", "1"],
}


def measure(family: str, folder: Path) -> dict[str, object]:
    store = folder / f"{family}.sqlite"
    code = main(["run", "--model", "local", "--family", family, *RUNS[family], "--lengths", "1k,2k,4k",
                 "--depths", "0.5", "--store", str(store), "--no-plots", "--no-progress"])
    if code != 0:
        raise SystemExit(f"{family}: ctxprobe run exited {code}")
    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
        recs = list(s.iter_case_records(run_id))
    report = report_json([run_id], store)
    return {"lengths": [(x["length"], x["mean"], x["n"]) for x in report["profiles"][0]["lengths"]],
            "outcomes": sorted({str(r["outcome"]) for r in recs}), "extra": report[family][family]}


def run(families: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for family in families:
            print(f"{family}: " + json.dumps(measure(family, Path(tmp))), flush=True)


if __name__ == "__main__":
    run(sys.argv[1:] or sorted(RUNS))
