"""Stores of sim runs with known behaviour, shared by the decide tests (built once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.store import Store

#: sim:decay answers right with probability 1 up to `cliff` prompt tokens and 0 past
#: cliff + width (models/sim.py); sim:perfect always answers right.
PRICED = {"sim:perfect": 10.0, "sim:decay?cliff=3000&width=1": 1.0, "sim:decay?cliff=6000&width=1": 2.0}


def run_sim(store: Path, model: str, lengths: str, *extra: str) -> str:
    """Run one sim through the CLI; its run id."""
    code = main(["run", "--model", model, "--lengths", lengths, "--depths", "0,0.5,1", "--store", str(store),
                 "--no-plots", "--no-progress", *extra])
    assert code == 0
    with Store(store) as s:
        return [r for r in s.list_runs() if r.model == model][-1].run_id


@pytest.fixture(scope="session")
def priced_sims(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """The three sims of the done-when check, 2K/4K/8K x 3 depths x 10 reps, and their price file."""
    root = tmp_path_factory.mktemp("decide")
    store = root / "runs.sqlite"
    prices = root / "prices.yaml"
    prices.write_text("".join(f'"{m}": {{input: {p}, output: {p}}}\n' for m, p in PRICED.items()), encoding="utf-8")
    ids = {m: run_sim(store, m, "2k,4k,8k", "--reps", "10") for m in PRICED}
    return store, prices, ids
