"""Sims of known behaviour and price, and how the decide tests run them (through the CLI)."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.cli import main
from ctxprobe.store import Store

#: sim:decay answers right with probability 1 up to `cliff` prompt tokens and 0 past
#: cliff + width (sim/model.py); sim:perfect always answers right.
PRICED = {"sim:perfect": 10.0, "sim:decay?cliff=3000&width=1": 1.0, "sim:decay?cliff=6000&width=1": 2.0}


def run_sim(store: Path, model: str, lengths: str, *extra: str) -> str:
    """Run one sim through the CLI; its run id."""
    code = main(["run", "--model", model, "--lengths", lengths, "--depths", "0,0.5,1", "--store", str(store),
                 "--no-plots", "--no-progress", *extra])
    assert code == 0
    with Store(store) as s:
        return [r for r in s.list_runs() if r.model == model][-1].run_id
