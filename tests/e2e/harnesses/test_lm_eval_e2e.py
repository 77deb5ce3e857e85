"""An exported run run by lm-evaluation-harness itself (the ``lm-eval`` extra), offline:
``lm_eval --include_path DIR --tasks ctxprobe_RUN --model local-chat-completions
--apply_chat_template`` against ``serve-sim`` on loopback. The server receives each case's
exact prompt once, lm-eval scores every case as ctxprobe scored it (its per-sample
``strict_accuracy``), and ``ctxprobe import-lm-eval`` of its ``--log_samples`` output
gives the run's per-cell results back.

lm-eval's request body (``LocalChatCompletion._create_payload``: ``messages``, ``model``,
``max_tokens``, ``temperature``, ``stop``, ``seed``) is what serve-sim answers, as the
OpenAI chat completions reference defines it; its sample-log fields (``doc``,
``arguments``, ``resps``, per-metric values) are those of lm-eval's ``EvaluationTracker``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")

from ctxprobe.cli import main  # noqa: E402
from ctxprobe.models import resolve_provider  # noqa: E402
from ctxprobe.sim.server import SimServer, _messages_hash  # noqa: E402
from ctxprobe.store import iter_export, open_existing  # noqa: E402
from ctxprobe.tokenizers import resolve_tokenizer  # noqa: E402

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


def test_lm_eval_sends_the_exact_cases_and_scores_them_as_ctxprobe(tmp_path: Path) -> None:
    tok = resolve_tokenizer("local")
    store = tmp_path / "s.sqlite"
    with SimServer(resolve_provider("sim:blind-middle", tok), tok) as server:
        url = server.start()
        assert main(["run", "--model", "openai-api/blind", "--base-url", url, "--family", "niah,vartrack",
                     "--lengths", "1k,2k", "--depths", "0,0.5,1", "--reps", "1", "--store", str(store),
                     "--no-plots", "--no-progress"]) == 0
        # a phone book in the system message: sent as the task's description, lm-eval's system turn
        assert main(["phonebook", "--model", "openai-api/blind", "--base-url", url, "--method", "ctxprobe",
                     "--param", "phonebook.book_in=system", "--lengths", "1k", "--needles", "4", "--runs", "2",
                     "--store", str(store), "--no-plots", "--no-progress"]) == 0
        with open_existing(store) as s:
            runs = {r.family: r for r in s.list_runs()}
        run, book = runs["niah,vartrack"], runs["phonebook"]
        stored = {r["case_id"]: r for r in iter_export(run.run_id, store)}
        books = {r["case_id"]: r for r in iter_export(book.run_id, store)}
        assert {m["role"] for r in books.values() for m in r["messages"]} == {"system", "user"}
        sent = [*stored.values(), *books.values()]
        before = {h: server.prompt_counts[h] for h in {_messages_hash(r["messages"]) for r in sent}}
        assert main(["export", run.run_id, "--store", str(store), "--lm-eval", str(tmp_path / "tasks")]) == 0
        assert main(["export", book.run_id, "--store", str(store), "--lm-eval", str(tmp_path / "tasks")]) == 0
        done = subprocess.run(
            [str(BIN / "lm_eval"), "--include_path", str(tmp_path / "tasks"), "--tasks",
             f"ctxprobe_{run.run_id},ctxprobe_{book.run_id}",
             "--apply_chat_template", "--model", "local-chat-completions", "--model_args",
             f"model=blind,base_url={url}/chat/completions,num_concurrent=1,max_retries=1",
             "--log_samples", "--output_path", str(tmp_path / "out")],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})  # nothing downloaded
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        # every case's exact messages reached the server once more (byte for byte: a hash of the whole chat)
        for rec in sent:
            h = _messages_hash(rec["messages"])
            assert server.prompt_counts[h] == before[h] + 1, rec["case_id"]
    samples = sorted((tmp_path / "out").rglob(f"samples_ctxprobe_{run.run_id}_*.jsonl"))
    assert len(samples) == 2  # one task per family (their output limits differ)
    rows = [json.loads(line) for f in samples for line in f.read_text().splitlines()]
    (book_samples,) = (tmp_path / "out").rglob(f"samples_ctxprobe_{book.run_id}_*.jsonl")
    for line in book_samples.read_text().splitlines():
        row = json.loads(line)
        rec = books[row["doc"]["case_id"]]
        assert (row["strict_accuracy"], row["resps"][0][0]) == (rec["score"], rec["output"])
    assert sorted(r["doc"]["case_id"] for r in rows) == sorted(stored)
    for row in rows:
        rec = stored[row["doc"]["case_id"]]
        assert row["doc"]["token_count"] == rec["token_count"]
        assert row["strict_accuracy"] == rec["score"]
        assert row["resps"][0][0] == rec["output"]
    assert 0 < sum(r["strict_accuracy"] for r in rows) < len(rows)
    results = json.loads(next((tmp_path / "out").rglob("results_*.json")).read_text())["results"]
    for family in ("niah", "vartrack"):
        mine = [r["score"] for r in stored.values() if r["family"] == family]
        got = results[f"ctxprobe_{run.run_id}_{family}"]["strict_accuracy,none"]
        assert got == pytest.approx(sum(mine) / len(mine))
    assert main(["import-lm-eval", *map(str, samples), "--store", str(store)]) == 0
    with open_existing(store) as s:
        imported = [r.run_id for r in s.list_runs() if r.run_id not in (run.run_id, book.run_id)]
    assert len(imported) == 1
    again = {r["case_id"]: (r["score"], r["outcome"]) for r in iter_export(imported[0], store)}
    assert again == {k: (r["score"], r["outcome"]) for k, r in stored.items()}
    # no regression found (the slice is too small to show every drop: INCONCLUSIVE, passed on request)
    assert main(["check", imported[0], "--baseline", run.run_id, "--store", str(store), "--allow-inconclusive"]) == 0
