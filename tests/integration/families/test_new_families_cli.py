"""The three 2025 families through the CLI like any family: ``--param`` list axes, the
families' own sim kinds (their parameters and one-line errors), and ``decide --use`` over
a run holding ``updates`` and ``instructions``; each family's own result in every report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.sim.model import make_sim
from ctxprobe.store import Store
from ctxprobe.tokenizers import resolve_tokenizer


def test_family_sim_kinds_take_their_parameters_and_refuse_others() -> None:
    tok = resolve_tokenizer("approx")
    sim = make_sim("sim:interference?slope=0.2&ctx=9000", tok)
    assert sim.params["slope"] == 0.2 and sim.context_window == 9000 and sim.params["seed"] == 0
    assert make_sim("sim:capacity", tok).params["n"] == 3
    with pytest.raises(CtxprobeError, match="unknown parameter 'cliff' for sim:out-budget: accepted are"):
        make_sim("sim:out-budget?cliff=3", tok)
    with pytest.raises(CtxprobeError, match="is not a valid float"):
        make_sim("sim:capacity?n=many", tok)
    with pytest.raises(CtxprobeError, match="unknown simulated model 'sim:nope'.*sim:interference"):
        make_sim("sim:nope", tok)


def _run(store: Path, model: str, *extra: str) -> str:
    code = main(["run", "--details", "--model", model, "--lengths", "1k,2k", "--depths", "0.5", "--reps", "16", "--store", str(store),
                 "--no-plots", "--no-progress", "--family", "updates,instructions",
                 "--param", "updates.updates=3,10", "--param", "updates.keys=2", "--param", "instructions.count=5",
                 *extra])
    assert code == 0
    with Store(store) as s:
        return [r for r in s.list_runs() if r.model == model][-1].run_id


def test_decide_use_reads_the_new_families_like_any(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    perfect = _run(store, "sim:perfect")
    weak = _run(store, "sim:capacity?n=3")  # follows 3 of 5 instructions; answers updates perfectly
    capsys.readouterr()
    assert main(["decide", perfect, weak, "--use", "updates,instructions", "--json", "--store", str(store)]) == 0
    out = json.loads(capsys.readouterr().out)
    limits = {lim["run_id"]: lim for lim in out["limits"]}
    assert limits[perfect]["hi"] == 2048
    # every instructions case of the weak sim scores 3/5: it confidently misses the bar at every length
    # (decide names the weakest family by its lower bound: both are unknown here, so the use's order)
    assert limits[weak]["hi"] is None and limits[weak]["use"] == "updates+instructions"
    with Store(store) as s:  # "--param updates.updates=3,10" is the U axis
        us = {r["meta"]["updates_per_key"] for r in s.iter_case_records(perfect) if r["family"] == "updates"}
    assert us == {3, 10}


def test_html_and_json_reports_carry_each_family_s_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, page = tmp_path / "s.sqlite", tmp_path / "r.html"
    code = main(["run", "--details", "--model", "sim:perfect", "--lengths", "2k", "--depths", "0.5", "--reps", "2",
                 "--store", str(store), "--no-plots", "--no-progress", "--family", "updates,longout,instructions",
                 "--param", "longout.answer_tokens=150"])
    assert code == 0
    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
    assert main(["report", run_id, "--html", str(page), "--no-plots", "--store", str(store)]) == 0
    html = page.read_text()
    for title in ("Update interference (PI-LLM)", "Long outputs (LongProc HTML→TSV)", "Instructions under load (IFEval)"):
        assert title in html
    assert "output effective length 150 tokens" in html and "instruction capacity 3" in html
    capsys.readouterr()  # the terminal report says each family's own result too
    assert main(["report", "--details", run_id, "--no-plots", "--store", str(store)]) == 0
    text = capsys.readouterr().out
    assert "longout: output effective length 150 tokens" in text and "instructions: instruction capacity 3" in text
    assert "updates: PI-LLM's curve, accuracy = 1.000 +0.000 × ln U" in text and "0 of 4 keys stale" in text
    assert main(["report", run_id, "--json", "--store", str(store)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["longout"]["longout"]["output_effective_length"] == 150
    assert out["instructions"]["instructions"]["instruction_capacity"] == 3
    assert out["updates"]["updates"]["points"][0]["key_outcomes"] == {"correct": 4}
