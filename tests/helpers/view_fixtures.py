"""The store ``ctxprobe view``'s tests read (built by :mod:`view_data`'s helpers). Loaded by
tests/conftest.py for every run, so ctxprobe is imported only when the fixture is used."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def view_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from ctxprobe.spec import make_spec
    from ctxprobe.store import Store
    from ctxprobe.sweep.run import run_sweep
    from view_data import GRID, SECRET_MODEL, import_inspect_like, inject_untrusted

    root = tmp_path_factory.mktemp("view")
    store = root / "s.sqlite"
    # priced apart (a sim has no price of its own): the runs page's cost column sorts real numbers
    prices = root / "prices.yaml"
    prices.write_text('"sim:perfect": {input: 3, output: 3}\n"sim:blind-middle": {input: 1, output: 1}\n',
                      encoding="utf-8")
    priced = {**GRID, "prices": str(prices)}
    perfect = run_sweep(make_spec({"model": "sim:perfect", **priced}), store, progress=False).run_id
    blind = run_sweep(make_spec({"model": "sim:blind-middle", **priced}), store, progress=False).run_id
    evil = inject_untrusted(store, blind)
    imported = import_inspect_like(store)
    with Store(store) as s:
        s.ensure_run("5ec2e7000000", model=SECRET_MODEL, tokenizer="local", family="niah", version="0",
                     spec={"model": SECRET_MODEL, "families": {"niah": {}}, "lengths": [512]}, meta={})
        s.update_run("5ec2e7000000", status="complete")
    return {"store": store, "perfect": perfect, "blind": blind, "evil": evil, "imported": imported,
            "secret": "5ec2e7000000", "root": root}
