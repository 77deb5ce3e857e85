"""A sweep with a reasoning-budget axis, end to end through the CLI: ``sim:reasoner``
(a sim that thinks through the context at a known rate) over three budgets, then the
report. Known truths (rate 8 thinking tokens per prompt token read, answer limit 48):

- budget 0: no thinking, it sees like ``blind-middle``: the depth-0.5 needle is missed at
  every length: accuracy 2/3, below the bar at the shortest length;
- budget 256: a 1K or 2K prompt needs ≤ 256 thinking tokens: every answer right; a 4K
  prompt needs 512: every 4K answer is cut off while thinking at 256 + 48 tokens
  (``output_truncated``, no score, left out of accuracy), so its curve stops at 2K;
- budget 1k: every prompt fits: accuracy 1 and effective length 4K.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.cli import main
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_id_for

SRC = str(Path(__file__).resolve().parents[2] / "src")
GRID = ["--lengths", "1k,2k,4k", "--depths", "0,0.5,1", "--reps", "2"]


def ctxprobe(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, Any]]:
    where = tmp_path_factory.mktemp("budgets")
    run = ctxprobe("run", "--details", "--model", "sim:reasoner", *GRID, "--reasoning-budgets", "0,256,1k", "--store", "r.sqlite",
                   "--no-plots", "--no-progress", cwd=where)
    assert run.returncode == 0, run.stderr
    assert "reasoning budgets" in run.stdout and "cut off" in run.stdout
    run_id = run_id_for(make_spec({"model": "sim:reasoner", "lengths": "1k,2k,4k", "depths": "0,0.5,1", "reps": 2,
                                   "reasoning_budgets": "0,256,1k"}))
    report = ctxprobe("report", run_id, "--store", "r.sqlite", "--json", cwd=where)
    assert report.returncode == 0, report.stderr
    exported = ctxprobe("export", run_id, "--store", "r.sqlite", "--jsonl", "-o", "cases.jsonl", cwd=where)
    assert exported.returncode == 0, exported.stderr
    return where, run_id, json.loads(report.stdout)


def test_each_budget_is_its_own_curve(swept: tuple[Path, str, dict[str, Any]]) -> None:
    _, _, report = swept
    by = {b["budget"]: b for b in report["reasoning_budgets"]}
    assert sorted(by) == [0, 256, 1024]
    assert by[0]["accuracy"] == pytest.approx(2 / 3) and by[0]["n"] == 18 and by[0]["effective_length"] is None
    assert by[256]["accuracy"] == 1.0 and by[256]["n"] == 12 and by[256]["effective_length"] == 2048
    assert by[1024]["accuracy"] == 1.0 and by[1024]["n"] == 18 and by[1024]["effective_length"] == 4096


def test_cut_off_while_thinking_is_counted_apart_never_as_wrong(swept: tuple[Path, str, dict[str, Any]]) -> None:
    _, _, report = swept
    by = {b["budget"]: b for b in report["reasoning_budgets"]}
    assert [by[b]["cut_off_while_thinking"] for b in (0, 256, 1024)] == [0, 6, 0]
    assert by[256]["cut_off_share"] == pytest.approx(6 / 18)
    assert any("cut off while thinking" in note for note in report["notes"])
    assert not any("--max-tokens" in note for note in report["notes"])  # not the answer limit's fault


def test_reasoning_tokens_billed(swept: tuple[Path, str, dict[str, Any]]) -> None:
    where, run_id, report = swept
    by = {b["budget"]: b for b in report["reasoning_budgets"]}
    assert by[0]["reasoning_tokens_billed"] == 0  # nothing thought, nothing billed
    recs = [json.loads(line) for line in (where / "cases.jsonl").read_text().splitlines()]
    cut = [r for r in recs if r["outcome"] == "output_truncated"]
    assert len(cut) == 6 and all(r["cell"]["reasoning_budget"] == 256 and r["cell"]["length"] == 4096 for r in cut)
    # a cut reply thought up to its hard cap (budget + answer limit), as its usage says
    assert by[256]["reasoning_tokens_billed"] == 6 * (256 + 48) + sum(
        -(-r["token_count"] // 8) for r in recs if r["cell"].get("reasoning_budget") == 256 and r["outcome"] != "output_truncated")


def test_case_ids_and_profiles_carry_the_budget(swept: tuple[Path, str, dict[str, Any]]) -> None:
    where, run_id, report = swept
    assert {p["family"] for p in report["profiles"]} == {"niah@think0", "niah@think256", "niah@think1k"}
    recs = [json.loads(line) for line in (where / "cases.jsonl").read_text().splitlines()]
    assert len(recs) == 54 and all(r["case_id"].endswith(f"/b{r['cell']['reasoning_budget']}") for r in recs)
    # every budget of a case was sent the same prompt: budgets are paired
    prompts: dict[str, set[str]] = {}
    for r in recs:
        prompts.setdefault(r["case_id"].rsplit("/b", 1)[0], set()).add(r["prompt_hash"])
    assert len(prompts) == 18 and all(len(p) == 1 for p in prompts.values())


def test_resuming_sends_nothing_again(swept: tuple[Path, str, dict[str, Any]]) -> None:
    where, run_id, _ = swept
    again = ctxprobe("run", "--details", "--model", "sim:reasoner", *GRID, "--reasoning-budgets", "1k,0,256", "--store", "r.sqlite",
                     "--no-plots", "--no-progress", cwd=where)
    assert again.returncode == 0 and f"run {run_id} resumed: 0 requests sent" in again.stdout + again.stderr


def test_budget_axis_is_in_the_run_id_only_when_used() -> None:
    plain = {"model": "sim:reasoner", "lengths": "1k"}
    assert run_id_for(make_spec(plain)) == run_id_for(make_spec({**plain, "reasoning_budgets": None}))
    assert run_id_for(make_spec(plain)) != run_id_for(make_spec({**plain, "reasoning_budgets": "0"}))
    assert make_spec({**plain, "reasoning_budgets": "4k,0,1k"}).reasoning_budgets == [0, 1024, 4096]


@pytest.mark.parametrize(("value", "why"), [("0,0", "repeat"), ("1k,x", "bad reasoning budget"), ("", "at least one")])
def test_bad_budgets_are_one_line_errors(value: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--details", "--model", "sim:reasoner", "--lengths", "1k", "--reasoning-budgets", value,
                 "--store", str(tmp_path / "s.sqlite"), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and why in err and "Traceback" not in err


def test_a_model_that_cannot_reason_takes_budget_zero_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    code = main(["run", "--details", "--model", "sim:perfect", "--lengths", "1k", "--depths", "0.5", "--reps", "1",
                 "--reasoning-budgets", "0,1k", "--store", str(store), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "sim:perfect cannot reason" in err and "Traceback" not in err
    assert not store.exists()  # refused before anything was stored
    code = main(["run", "--details", "--model", "sim:perfect", "--lengths", "1k", "--depths", "0.5", "--reps", "1",
                 "--reasoning-budgets", "0", "--store", str(store), "--no-plots", "--no-progress"])
    assert code == 0 and "niah@think0" in capsys.readouterr().out


def test_yaml_spec_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("model: sim:reasoner\nlengths: [1k]\ndepths: [0.5]\nreps: 1\nreasoning_budgets: [0, 1k]\n")
    code = main(["run", "--details", str(spec), "--store", str(tmp_path / "s.sqlite"), "--no-plots", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "niah@think0" in out and "niah@think1k" in out


def test_plan_prices_reasoning_output(capsys: pytest.CaptureFixture[str]) -> None:
    # o4-mini's built-in price: $1.10 / $4.40 per 1M input / output tokens
    code = main(["plan", "--model", "openai/o4-mini", "--lengths", "1k", "--depths", "0", "--reps", "1",
                 "--max-tokens", "48", "--reasoning-budgets", "1k,4k"])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 requests" in out and "output tokens: at most 5,216 (5,120 of them reasoning" in out
    assert f"${(2 * 1024 * 1.10 + 5216 * 4.40) / 1e6:,.2f}" in out


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_embedded_model_takes_budget_zero_only(tmp_path: Path) -> None:
    """SmolLM2 cannot reason: budget 0 runs end to end (a plain request, its own curve in
    the report); asking it for a thinking budget is refused before anything is stored."""
    pytest.importorskip("xllamacpp")
    grid = ["--lengths", "512", "--depths", "0.5", "--reps", "1", "--max-tokens", "48", "--store", "s.sqlite"]
    refused = ctxprobe("run", "--details", "--model", "local", *grid, "--reasoning-budgets", "0,1k", "--no-plots", "--no-progress",
                       cwd=tmp_path)
    assert refused.returncode == 2 and "local cannot reason" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "s.sqlite").exists()
    run = ctxprobe("run", "--details", "--model", "local", *grid, "--reasoning-budgets", "0", "--no-plots", "--no-progress",
                   cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    run_id = run_id_for(make_spec({"model": "local", "lengths": "512", "depths": "0.5", "reps": 1,
                                   "decoding": {"max_tokens": 48}, "reasoning_budgets": [0]}))
    report = json.loads(ctxprobe("report", run_id, "--store", "s.sqlite", "--json", cwd=tmp_path).stdout)
    (row,) = report["reasoning_budgets"]
    assert row["budget"] == 0 and row["answered"] == 1 and row["cut_off_while_thinking"] == 0
    assert row["reasoning_tokens_billed"] == 0  # no thinking came back
    assert [p["family"] for p in report["profiles"]] == ["niah@think0"]


def test_html_report_has_the_budget_section(swept: tuple[Path, str, dict[str, Any]]) -> None:
    where, run_id, _ = swept
    html = ctxprobe("report", run_id, "--store", "r.sqlite", "--html", "page.html", "--no-plots", cwd=where)
    assert html.returncode == 0, html.stderr
    page = (where / "page.html").read_text()
    section = page[page.index('<section id="reasoning-budgets">'):]
    section = section[:section.index("</section>")]
    assert "6/18 33%" in section and section.count("<tr") == 4  # a header and one row per budget
    assert 'href="#reasoning-budgets"' in page and "niah@think256" in page


def test_budgets_over_the_wire_to_a_served_reasoner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """openai-compat → serve-sim's server → sim:reasoner: the budget travels as the request
    fields an OpenAI-compatible server reads (max_tokens raised, chat_template_kwargs,
    thinking_token_budget), the reasoning comes back in reasoning_content and the usage's
    reasoning_tokens, and the report is the same as in process."""
    from ctxprobe.models import resolve_provider
    from ctxprobe.sim.server import SimServer
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:reasoner", tok), tok) as server:
        url = server.start()
        store = tmp_path / "w.sqlite"
        code = main(["run", "--details", "--model", f"openai-compat:sim@{url}", "--tokenizer", "local", "--lengths", "1k,2k,4k",
                     "--depths", "0.5", "--reps", "1", "--reasoning-budgets", "0,256", "--store", str(store),
                     "--no-plots", "--no-progress"])
        assert code == 0, capsys.readouterr().err
        # what the server read: enable_thinking false is budget 0; max_tokens covers thinking + answer;
        # the preflight's probe (24 tokens) is sent once at the smallest budget above 0
        assert sorted(server.reasoning_requests) == [(48, 0)] * 3 + [(24 + 256, 256)] + [(48 + 256, 256)] * 3
    spec = {"model": f"openai-compat:sim@{url}", "tokenizer": "local", "lengths": "1k,2k,4k", "depths": "0.5",
            "reps": 1, "reasoning_budgets": "0,256"}
    capsys.readouterr()
    assert main(["report", run_id_for(make_spec(spec)), "--store", str(store), "--json"]) == 0
    by = {b["budget"]: b for b in json.loads(capsys.readouterr().out)["reasoning_budgets"]}
    assert (by[0]["accuracy"], by[0]["n"], by[0]["reasoning_tokens_billed"]) == (0.0, 3, 0)  # blind to the middle
    assert (by[256]["accuracy"], by[256]["n"], by[256]["cut_off_while_thinking"]) == (1.0, 2, 1)
    assert by[256]["effective_length"] == 2048 and by[256]["reasoning_tokens_billed"] > 256 + 48


def test_an_exported_pack_keeps_its_budgets(swept: tuple[Path, str, dict[str, Any]],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    where, _, _ = swept
    pack = str(where / "cases.jsonl")
    code = main(["run", "--details", "--cases", pack, "--model", "sim:perfect", "--store", str(where / "p.sqlite"), "--no-plots",
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "sim:perfect cannot reason" in err
    code = main(["run", "--details", "--cases", pack, "--model", "sim:reasoner", "--store", str(where / "p.sqlite"), "--no-plots",
                 "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "niah@think256" in out and "6/18 33%" in out  # re-sent at the same budgets, same result


def test_compare_pairs_cases_budget_by_budget(swept: tuple[Path, str, dict[str, Any]]) -> None:
    from ctxprobe.report.compare_runs import compare_runs

    where, run_id, _ = swept
    same = compare_runs(run_id, run_id, where / "r.sqlite")
    assert sorted(f.family for f in same.families) == ["niah@think0", "niah@think1k", "niah@think256"]
    assert same.n_paired == 48 and same.n_excluded == 6  # the 6 cut off while thinking have no score to pair
    assert not same.significant_cells()


def test_a_server_that_ignores_the_budget_is_named_not_silent(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An OpenAI-compatible server serving a model that does not reason takes the fields
    and thinks nothing: the report says the control may have been ignored."""
    from ctxprobe.models import resolve_provider
    from ctxprobe.sim.server import SimServer
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = server.start()
        code = main(["run", "--details", "--model", f"openai-compat:sim@{url}", "--tokenizer", "local", "--lengths", "1k",
                     "--depths", "0.5", "--reps", "2", "--reasoning-budgets", "0,1k", "--store",
                     str(tmp_path / "i.sqlite"), "--no-plots", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    flat = " ".join(out.split())
    assert "niah at reasoning budget 1k: no reasoning tokens were billed in any answer" in flat
    assert "niah at reasoning budget 0: no reasoning" not in flat  # budget 0 asks for none
    # a control the server may have ignored changes how the table reads: the default report says it too
    run_id = next(w for w in flat.split() if len(w) == 12 and all(c in "0123456789abcdef" for c in w))
    assert main(["report", run_id, "--store", str(tmp_path / "i.sqlite"), "--no-plots"]) == 0
    brief = " ".join(capsys.readouterr().out.split())
    assert "note: niah at reasoning budget 1k: no reasoning tokens were billed in any answer" in brief


def test_the_window_and_the_spending_cap_count_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ctxprobe.core.case import Case, Cell
    from ctxprobe.prices.table import Price
    from ctxprobe.runner.budget import Ledger

    # 1K prompt + 48 answer tokens fit a 2,000-token window; + a 1k budget does not
    code = main(["run", "--details", "--model", "sim:reasoner?ctx=2000", "--lengths", "1k", "--depths", "0.5", "--reps", "1",
                 "--reasoning-budgets", "0,1k", "--store", str(tmp_path / "w.sqlite"), "--no-plots", "--no-progress"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "+ 1072 output tokens exceeds" in err
    ledger = Ledger("m", Price(1.0, 2.0), max_cost=None, spent=0.0, max_tokens=48)
    assert ledger.admit(Case(Cell("niah", 1000, 0.5, 1024), 0, 0, [], [], token_count=1000))
    assert sum(ledger._reserved.values()) == pytest.approx((1000 * 1.0 + (48 + 1024) * 2.0) / 1e6)


def test_adaptive_refuses_the_axis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--details", "--adaptive", "--model", "sim:reasoner", "--lengths", "1k,2k", "--reasoning-budgets", "0,1k",
                 "--store", str(tmp_path / "a.sqlite"), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--adaptive does not take --reasoning-budgets" in err
    assert not (tmp_path / "a.sqlite").exists()
