"""`ctxprobe phonebook` on par with `run`: `--plan` prices what the same command then
sends (within 1%), `--max-cost` stops a run with every answer kept and a rerun resumes it,
the rate flags reach the spec, exit codes are run's; `run`/`plan --family phonebook` are
refused with a pointer. Against a loopback sim server priced through a price file."""

from __future__ import annotations

import re
import sqlite3

import pytest

from ctxprobe.cli import main
from ctxprobe.models import resolve_provider
from ctxprobe.sim.server import SimServer
from ctxprobe.tokenizers import resolve_tokenizer

GRID = ["--tokenizer", "local", "--entries", "100,200", "--needles", "5,20", "--runs", "2", "--no-progress",
        "--no-plots", "--concurrency", "1"]


@pytest.fixture
def server(tmp_path):
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as srv:
        url = srv.start()
        prices = tmp_path / "prices.yaml"
        # input only: the plan's output tokens are a ceiling (every answer may use its limit)
        prices.write_text(f'"openai-compat:sim@{url}": {{input: 100.0, output: 0.0}}\n')
        yield f"openai-compat:sim@{url}", str(prices)


def _responses(store) -> list[tuple]:
    return sqlite3.connect(store).execute(
        "SELECT case_id, output, outcome, reported_prompt_tokens, cost_usd FROM responses ORDER BY case_id").fetchall()


def test_plan_prices_what_the_run_sends(server, tmp_path, capsys) -> None:
    model, prices = server
    store = str(tmp_path / "s.sqlite")
    args = ["phonebook", "--model", model, *GRID, "--prices", prices, "--store", store]
    assert main([*args, "--plan"]) == 0
    plan = capsys.readouterr().out
    assert not (tmp_path / "s.sqlite").exists() or _responses(store) == []  # the plan sends nothing
    planned_tokens = int(re.search(r"input tokens: ([\d,]+)", plan).group(1).replace(",", ""))  # type: ignore[union-attr]
    planned_usd = float(re.search(r"price: at most \$([\d.]+)", plan).group(1))  # type: ignore[union-attr]
    assert main(args) == 0
    rows = _responses(store)
    assert len(rows) == 2 * 2 * 2  # books x N x runs
    sent_tokens = sum(r[3] for r in rows)
    billed = sum(r[4] for r in rows)
    assert abs(planned_tokens - sent_tokens) <= 0.01 * sent_tokens
    assert abs(planned_usd - billed) <= 0.01 * billed


def test_max_cost_stops_with_every_answer_kept_and_a_rerun_resumes(server, tmp_path, capsys) -> None:
    model, prices = server
    store = str(tmp_path / "c.sqlite")
    args = ["phonebook", "--model", model, *GRID, "--prices", prices, "--store", store]
    # a case of 100 entries is ~1,400 tokens ($0.14), of 200 ~2,700 ($0.27): $0.5 stops early
    assert main([*args, "--max-cost", "0.5"]) == 3
    err = capsys.readouterr().err
    first = _responses(store)
    assert 0 < len(first) < 8 and "never sent" in err and "--max-cost" in err
    assert all(out and outcome == "correct" for _, out, outcome, _, _ in first)  # every answer kept, scored
    assert sum(r[4] for r in first) <= 0.5
    assert main([*args, "--max-cost", "10"]) == 0  # the same command, a higher cap: resumes
    done = _responses(store)
    assert len(done) == 8 and set(first) <= set(done)  # nothing resent, nothing lost


def test_rate_flags_and_reasoning_budgets_reach_the_spec(server, tmp_path, capsys) -> None:
    model, prices = server
    store = str(tmp_path / "r.sqlite")
    assert main(["phonebook", "--model", model, *GRID, "--store", store, "--rpm", "6000", "--tpm", "10000000",
                 "--pricing", "on-demand", "--prices", prices]) == 0
    spec = sqlite3.connect(store).execute("SELECT spec_json FROM runs").fetchone()[0]
    assert '"rpm": 6000' in spec and '"tpm": 10000000' in spec and '"pricing": "on-demand"' in spec
    # a model that cannot reason refuses a budget in one line, as under run
    code = main(["phonebook", "--model", "sim:perfect", *GRID, "--store", store, "--reasoning-budgets", "0,1k"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err


@pytest.mark.parametrize("command", ["run", "plan"])
def test_run_and_plan_of_the_phonebook_family_point_to_phonebook(command, tmp_path, capsys) -> None:
    code = main([command, "--model", "sim:perfect", "--family", "phonebook", "--store", str(tmp_path / "x.sqlite"),
                 "--no-progress"] if command == "run" else [command, "--model", "sim:perfect", "--family", "phonebook"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "use `ctxprobe phonebook" in err and err.count("\n") == 1


def test_an_all_timeout_run_says_so(tmp_path, capsys) -> None:
    from ctxprobe.core.case import Cell
    from ctxprobe.sim.faults import FaultPlan
    from ctxprobe.sim.server import _messages_hash
    from ctxprobe.sweep.preflight import PROBE_MESSAGES
    from ctxprobe.haystack.context import BuildContext
    from ctxprobe.core.family_lookup import make_family, validate_params

    tok = resolve_tokenizer("local")
    family = make_family("phonebook", BuildContext(tok, None))
    params = validate_params("phonebook", {"method": "post", "needles": [5], "unit": "entries"})
    case = family.generate(Cell("phonebook", 50, 0.0), 0, seed=0, params=params)
    # a schedule whose answer to the case comes after the client's timeout, the probe's at once
    plan = next(p for p in (FaultPlan({"hang": 0.5}, hang_seconds=3.0, seed=f"t{i}") for i in range(200))
                if p.kind_for(_messages_hash(PROBE_MESSAGES)) is None and p.kind_for(_messages_hash(case.messages)))
    with SimServer(resolve_provider("sim:perfect", tok), tok, faults=plan) as srv:
        url = srv.start()
        code = main(["phonebook", "--model", f"openai-compat:sim@{url}", "--tokenizer", "local", "--entries", "50",
                     "--needles", "5", "--runs", "1", "--timeout", "0.5", "--retries", "0", "--no-progress",
                     "--no-plots", "--store", str(tmp_path / "t.sqlite")])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "Traceback" not in err
    assert "has no scored phonebook cases: 1 of 1 ended in `error` after retries, 1 of them timed out" in err
    assert "rerun the same command" in err
