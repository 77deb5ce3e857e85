"""`run` exits 3 when the run is incomplete because of harness failures, 0 otherwise."""

from __future__ import annotations

import sqlite3

from ctxprobe.cli import main
from ctxprobe.models import resolve_provider
from ctxprobe.sim.faults import FaultPlan
from ctxprobe.sim.server import SimServer, _messages_hash
from ctxprobe.sweep.preflight import PROBE_MESSAGES
from ctxprobe.tokenizers import resolve_tokenizer


def _run(url: str, store, *extra: str) -> int:
    return main(["run", "--model", f"openai-compat:sim@{url}", "--tokenizer", "local", "--lengths", "512",
                 "--depths", "0,1", "--reps", "3", "--store", str(store), "--no-progress", "--no-plots", *extra])


def _outcomes(store) -> dict[str, int]:
    return dict(sqlite3.connect(store).execute("SELECT outcome, COUNT(*) FROM responses GROUP BY outcome").fetchall())


def test_error_cases_left_exit_3_then_0_once_retried(tmp_path, capsys) -> None:
    tok = resolve_tokenizer("local")
    plan = next(p for p in (FaultPlan({"500": 0.4}, seed=f"e{i}") for i in range(50))
                if p.kind_for(_messages_hash(PROBE_MESSAGES)) is None)
    with SimServer(resolve_provider("sim:perfect", tok), tok, faults=plan) as server:
        url = server.start()
        store = tmp_path / "e.sqlite"
        assert _run(url, store, "--retries", "0") == 3
        err = capsys.readouterr().err
        n_err = _outcomes(store).get("error", 0)
        assert n_err > 0 and f"{n_err} case" in err and "incomplete" in err and "Traceback" not in err
        # a 500 fails only the first attempt: the rerun retries exactly the error cases and completes
        assert _run(url, store, "--retries", "0") == 0
        assert _outcomes(store) == {"correct": 6}


def test_truncated_prompts_exit_3(tmp_path, capsys) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok, truncate_to=400) as server:
        url = server.start()
        store = tmp_path / "t.sqlite"
        assert _run(url, store) == 3
        assert _outcomes(store) == {"input_truncated": 6}
        assert "truncated by the server" in capsys.readouterr().err


def test_a_clean_run_exits_0(tmp_path) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = server.start()
        store = tmp_path / "ok.sqlite"
        assert _run(url, store) == 0
        assert _outcomes(store) == {"correct": 6}


def test_a_run_stopped_by_the_spending_cap_exits_3_then_0_once_raised(tmp_path, capsys) -> None:
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        url = server.start()
        store = tmp_path / "c.sqlite"
        prices = tmp_path / "prices.yaml"
        prices.write_text(f'"openai-compat:sim@{url}": {{input: 1000.0, output: 0.0}}\n')  # ~$0.5 per case
        assert _run(url, store, "--prices", str(prices), "--max-cost", "1.6", "--concurrency", "1") == 3
        err = capsys.readouterr().err
        assert "3 of 6 planned cases were never sent" in err and "--max-cost" in err
        assert _outcomes(store) == {"correct": 3}
        # the same command with a cap that covers the rest resumes and completes
        assert _run(url, store, "--prices", str(prices), "--max-cost", "10", "--concurrency", "1") == 0
        assert _outcomes(store) == {"correct": 6}
