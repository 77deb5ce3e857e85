"""Helpers for ``ctxprobe view``'s tests (the store is tests/helpers/view_fixtures.py's fixture): real sim sweeps (sim:perfect,
sim:blind-middle), a case whose prompt and output carry markup, an imported inspect run
(replies the sim wrote by reading each prompt, stored by the importer
``import-inspect`` uses) and a run whose model names a URL with credentials."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.records import StoredResponse
from ctxprobe.store import Store, iter_export

EVIL_OUTPUT = "<script>window.pwned=1;alert(1)</script></pre><img src=x onerror=\"window.pwned=2;alert(2)\"> & done"
EVIL_PROMPT = "</pre></details><script>window.pwned=3</script><b>bold?</b>"
GRID: dict[str, Any] = {"lengths": "512,1k,2k", "depths": "0,0.5,1", "reps": 2, "families": {"niah": {"distractors": 2}}}
SECRET = "hunter2-very-secret"
SECRET_MODEL = f"openai-compat:qwen@https://user:{SECRET}@127.0.0.1:9/v1?api_key={SECRET}"


def inject_untrusted(store_path: Path, run_id: str) -> str:
    """A real failing case whose prompt and reply carry markup; returns its case id."""
    rec = next(r for r in iter_export(run_id, store_path) if r["outcome"] != "correct")
    needle = rec["meta"]["needle"]
    content = rec["messages"][-1]["content"].replace(needle, needle + " " + EVIL_PROMPT)
    case = Case(Cell(rec["family"], rec["length"], rec["depth"]), rec["rep"], rec["seed"],
                [{"role": "user", "content": content}], rec["expected"], rec["distractors"], rec["meta"],
                rec["token_count"], rec["needle_token_pos"], rec["realised_depth"])
    with Store(store_path) as store:
        with store.db:  # the store never replaces a stored case or answer: clear them first
            store.db.execute("DELETE FROM responses WHERE run_id=? AND case_id=?", (run_id, rec["case_id"]))
            store.db.execute("DELETE FROM cases WHERE run_id=? AND case_id=?", (run_id, rec["case_id"]))
        store.save_case(run_id, case)
        store.save_response(run_id, rec["case_id"], StoredResponse(
            output=EVIL_OUTPUT, finish_reason="stop", reported_prompt_tokens=rec["token_count"], completion_tokens=30,
            latency_s=0.01, attempts=1, error=None, score=0.0, outcome="wrong", detail={}))
    return str(rec["case_id"])


def import_inspect_like(store_path: Path) -> str:
    """An imported inspect run: sim:first-half answers each case by reading its prompt,
    stored by :func:`ctxprobe.harnesses.importing.import_replies` as ``import-inspect`` does."""
    from ctxprobe.harnesses.cases import HarnessCases, Reply, harness_spec
    from ctxprobe.harnesses.importing import import_replies
    from ctxprobe.models import resolve_provider
    from ctxprobe.models.base import GenerateRequest
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")
    sim = resolve_provider("sim:first-half", tok)
    harness = HarnessCases(harness_spec("niah", model="local", tokenizer="local", lengths="512,1k", depths="0,1",
                                        reps=2, params={"distractors": 2}), "local")
    replies = []
    for case in harness.cases.values():
        out = asyncio.run(sim.generate(GenerateRequest(messages=case.messages, max_tokens=48)))
        replies.append(Reply(case.case_id, out.text, "stop", out.prompt_tokens, out.completion_tokens))
    done = import_replies(harness, replies, store_path, source="inspect", source_id="eval-view-test",
                          harness_model="inspect:mockllm/model", meta={"inspect_log": "view-test.eval"})
    return done.run_id


