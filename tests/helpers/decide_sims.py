"""Sims of known behaviour and price, and how the decide tests run them (through the CLI)."""

from __future__ import annotations

import sqlite3
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


#: sim:rag with a middle sag: a cliff at 3000 tokens, 5 look-alikes tolerated, 30% missed mid-prompt.
RAG_SAG = "sim:rag?cliff=3000&tolerance=5&sag=0.3&late=0.15"


def rag_sweep(store: Path, model: str) -> str:
    """decide --rag's grid: niah at 1K-4K with 0/1/3/10 look-alikes, three depths, 20 reps."""
    return run_sim(store, model, "1k,2k,4k", "--family", "niah", "--param", "niah.distractors=0,1,3,10",
                   "--reps", "20", "--threshold", "0.7")


def copy_store(src: Path, dst: Path) -> Path:
    """``src`` copied whole (SQLite's backup) to ``dst``."""
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    return dst
