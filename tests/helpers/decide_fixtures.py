"""Stores of sim runs with known behaviour, shared by the decide tests (built once). Loaded
by tests/conftest.py for every run, so ctxprobe is imported only when the fixture is used."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def priced_sims(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """The three sims of the done-when check, 2K/4K/8K x 3 depths x 10 reps, and their price file."""
    from decide_sims import PRICED, run_sim

    root = tmp_path_factory.mktemp("decide")
    store = root / "runs.sqlite"
    prices = root / "prices.yaml"
    prices.write_text("".join(f'"{m}": {{input: {p}, output: {p}}}\n' for m, p in PRICED.items()), encoding="utf-8")
    ids = {m: run_sim(store, m, "2k,4k,8k", "--reps", "10") for m in PRICED}
    return store, prices, ids
