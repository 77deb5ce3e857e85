"""`ctxprobe run --cases PACK` goes through the sweep's own session: preflight (exact token
counts, so a silent left-truncation is ``input_truncated`` with no tolerance), the cost
ledger (``--max-cost`` stops before the cap), a run id without the server's URL, and the
pack's cell checked like a grid's."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.sim.server import SimServer
from ctxprobe.report.export import write_pack
from ctxprobe.spec import make_spec
from ctxprobe.store import Store, iter_export
from ctxprobe.sweep.packs import load_pack, pack_run_id, run_pack
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

TRUNCATE_TO = 1500


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("pack")
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "512,1k,2k", "depths": "0,1",
                      "reps": 1})
    result = run_sweep(spec, d / "src.sqlite", progress=False)
    write_pack(result.run_id, d / "src.sqlite", d / "pack.jsonl")
    return d / "pack.jsonl"


def _meta(store: Path, run_id: str) -> dict:
    row = sqlite3.connect(store).execute("SELECT meta_json FROM runs WHERE run_id=?", (run_id,)).fetchone()
    return json.loads(row[0])


def test_pack_run_has_preflight_and_exact_truncation_labels(pack, tmp_path, capsys) -> None:
    tok = resolve_tokenizer("local")
    store = tmp_path / "s.sqlite"
    with SimServer(resolve_provider("sim:perfect", tok), tok, truncate_to=TRUNCATE_TO) as server:
        model = f"openai-compat:sim@{server.start()}"
        code = main(["run", "--cases", str(pack), "--model", model, "--tokenizer", "local", "--store", str(store),
                     "--no-progress", "--no-plots", "--out", str(tmp_path / "r")])
    assert code == 3, capsys.readouterr().err  # incomplete: the truncated cases are harness failures
    (run_id,) = sqlite3.connect(store).execute("SELECT run_id FROM runs").fetchone()
    preflight = _meta(store, run_id)["preflight"]
    assert preflight["probe_requests"] >= 1 and preflight["reported_tokens"] == preflight["counted_tokens"]
    records = list(iter_export(run_id, store))
    assert len(records) == 6
    cut = [r for r in records if r["token_count"] > TRUNCATE_TO]
    assert cut and all(r["outcome"] == "input_truncated" and r["score"] is None for r in cut)
    assert all(r["detail"]["tolerance"] == 0 and r["detail"]["reported"] <= TRUNCATE_TO for r in cut)
    assert all(r["outcome"] == "correct" for r in records if r["token_count"] <= TRUNCATE_TO)


def test_pack_run_stops_at_the_spending_cap_and_its_id_has_no_url(pack, tmp_path, case_requests) -> None:
    tok = resolve_tokenizer("local")
    store = tmp_path / "s.sqlite"
    counts = sorted(pc.case.token_count for pc in load_pack(pack))
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        model = f"openai-compat:sim@{server.start()}"
        prices = tmp_path / "prices.yaml"
        prices.write_text(f'"{model}": {{input: 1000.0, output: 0.0}}\n')  # $1 per 1K prompt tokens
        cap = (counts[0] + counts[1] + 1) / 1000  # the two smallest prompts fit, no third does
        result = run_pack(pack, model, store, tokenizer="local", concurrency=1, max_cost=cap, prices=str(prices))
        assert result.sent == 2 == case_requests(server)
    with Store(store) as s:
        assert 0 < s.spent(result.run_id) <= cap
    assert _meta(store, result.run_id)["transport"]["max_cost"] == cap
    # the same pack against the same model served elsewhere is the same run
    other = pack_run_id(load_pack(pack), "openai-compat:sim@http://10.9.9.9:1/v1", {})
    assert other == pack_run_id(load_pack(pack), model, {}) == pack_run_id(load_pack(pack), "openai-compat:sim", {})


def _edited(pack: Path, out: Path, change) -> Path:
    rows = [json.loads(x) for x in pack.read_text(encoding="utf-8").splitlines()]
    change(rows[0])
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return out


@pytest.mark.parametrize("change, why", [
    (lambda r: r["cell"].update(depth=1.7), "depth 1.7 is outside"),
    (lambda r: r["cell"].update(depth=-0.1), "depth -0.1 is outside"),
    (lambda r: r["cell"].update(length=0), "length 0 is not positive"),
    (lambda r: r["cell"].update(family="nosuch"), "family 'nosuch' is unknown"),
])
def test_a_bad_cell_is_refused_and_writes_nothing(pack, tmp_path, change, why) -> None:
    bad = _edited(pack, tmp_path / "bad.jsonl", change)
    store = tmp_path / "s.sqlite"
    with pytest.raises(CtxprobeError, match=why):
        run_pack(bad, "sim:perfect", store, allow_edited=True)
    assert not store.exists()


def test_cell_bounds_are_inclusive(pack, tmp_path) -> None:
    """Depth 0 and 1 are cells of their own (the boundary of [0, 1]), and an edited but
    in-range depth is caught by the case id, not accepted."""
    assert {pc.case.cell.depth for pc in load_pack(pack)} == {0.0, 1.0}
    moved = _edited(pack, tmp_path / "moved.jsonl", lambda r: r["cell"].update(depth=0.5))
    with pytest.raises(CtxprobeError, match="line 1.*case_id.*--allow-edited-pack"):
        load_pack(moved)


def test_a_non_json_line_names_the_real_export_command(pack, tmp_path, capsys) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text(pack.read_text(encoding="utf-8").splitlines()[0] + "\n{not json\n", encoding="utf-8")
    with pytest.raises(CtxprobeError, match=r"line 2.*ctxprobe export RUN --jsonl -o PACK") as info:
        load_pack(junk)
    # the flags it names exist: export --jsonl -o parses
    import argparse

    from ctxprobe.cli import build_parser

    args = build_parser().parse_args(["export", "RUN", "--jsonl", "-o", "PACK"])
    assert isinstance(args, argparse.Namespace) and args.jsonl and args.output == "PACK"
    assert "--pack" not in str(info.value)


@pytest.mark.parametrize("setting, where", [({"concurrency": 0}, "concurrency"), ({"retries": -1}, "retries"),
                                            ({"nonsense": 1}, "nonsense")])
def test_a_bad_transport_setting_is_one_line_and_writes_nothing(pack, tmp_path, setting, where) -> None:
    store = tmp_path / "s.sqlite"
    with pytest.raises(CtxprobeError, match=f"bad setting '{where}'") as info:
        run_pack(pack, "sim:perfect", store, **setting)
    assert "\n" not in str(info.value) and not store.exists()
