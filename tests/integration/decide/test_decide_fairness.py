"""Runs that cannot be compared fairly are named with what to do; none is dropped. And a
use's limit is its weakest family's effective length."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from decide_sims import run_sim
from ctxprobe.cli import main
from ctxprobe.decide.choose import choose
from ctxprobe.decide.fairness import caveats as caveats_of
from ctxprobe.prices.table import load_prices
from ctxprobe.decide.runs import load_run
from ctxprobe.store import Store


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str], str]:
    root = tmp_path_factory.mktemp("fair")
    store = root / "s.sqlite"
    prices = root / "p.yaml"
    prices.write_text('"sim:perfect": {input: 3, output: 3}\n', encoding="utf-8")
    ids = {
        "perfect": run_sim(store, "sim:perfect", "1k,2k", "--family", "niah,vartrack", "--reps", "8"),
        # another distractor count: another task; blind in the middle (sim/model.py)
        "blind": run_sim(store, "sim:blind-middle", "1k,2k", "--reps", "8", "--param", "niah.distractors=2"),
    }
    return str(store), ids, str(prices)


def _decide(capsys, store: str, *args: str) -> dict:
    capsys.readouterr()
    assert main(["decide", *args, "--store", store, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_unfair_comparisons_are_named_with_what_to_do(mixed, capsys) -> None:
    store, ids, prices = mixed
    out = _decide(capsys, store, *ids.values(), "--prices", prices)
    caveats = "\n".join(out["caveats"])
    assert "vartrack: not measured in" in caveats and "--family vartrack" in caveats
    assert "niah: parameters differ between runs" in caveats and "--param" in caveats
    # nothing dropped: every run is a candidate of every band, even where it lacks the family
    for choice in out["choices"]:
        assert {c["run_id"] for c in choice["candidates"]} == set(ids.values())
    vartrack = [c for c in out["choices"] if c["family"] == "vartrack"]
    assert all(next(x for x in c["candidates"] if x["run_id"] == ids["blind"])["meets"] == "untested"
               for c in vartrack)


def test_priced_beside_unpriced_is_named_and_ranked_last(mixed) -> None:
    store, ids, prices = mixed
    table = load_prices(prices)
    perfect, blind = (load_run(ids[k], store, table, threshold=None, bars=None) for k in ("perfect", "blind"))
    blind = replace(blind, price=None)  # a model no table knows (sims are free by default)
    caveats = "\n".join(caveats_of([perfect, blind], ["niah"], "tokens"))
    assert "no price for sim:blind-middle" in caveats and "--prices" in caveats
    twin = replace(perfect, price=None)  # the same answers, no price: it comes after the priced one
    (choice,) = choose([twin, perfect], ["niah"], [], [1024], "tokens", table)
    assert [(c.status, c.price) for c in choice.candidates] == [("yes", 3.0), ("yes", None)]
    assert choice.choice is not None and choice.choice.price == 3.0


def test_harness_failures_left_are_named(mixed, capsys) -> None:
    store, ids, _prices = mixed
    with Store(store) as s:  # one answer lost to the harness: `error` after retries
        with s.db:
            s.db.execute("UPDATE responses SET outcome='error', score=NULL WHERE rowid = (SELECT MIN(rowid) FROM "
                         "responses WHERE run_id=?)", (ids["blind"],))
    out = _decide(capsys, store, *ids.values())
    assert any("has harness failures left (1 `error` cases)" in c and "rerun the same" in c for c in out["caveats"])


def test_a_use_is_limited_by_its_weakest_family(mixed, capsys) -> None:
    store, ids, _prices = mixed
    out = _decide(capsys, store, ids["perfect"], "--use", "niah,vartrack")
    runs = out["runs"][0]["families"]
    (limit,) = out["limits"]
    weakest = min(("niah", "vartrack"), key=lambda f: (runs[f]["lo"] or 0, f))
    assert limit["use"] == "niah+vartrack" and limit["lo"] == runs[weakest]["lo"]
    assert [c["family"] for c in out["choices"]].count("niah+vartrack") == len(out["bands"])
