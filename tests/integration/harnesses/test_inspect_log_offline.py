"""``import-inspect`` of a log whose task counted with an ``endpoint:`` tokenizer, once
that server is gone: the log is evidence on its own. Its cases are read from the messages
it holds (each checked by the prompt hash ctxprobe wrote beside it) and the import says so;
the run stored is the one an import with the server up stores (same id, same scores). A
log that holds no answer keys, or whose messages were edited, is refused in one line.

The log is written with inspect_ai's own types and ``write_eval_log``, its metadata as
``ctxprobe.inspect_tasks.tasks`` writes it; the tokenizer endpoint is our sim server on
loopback (``/tokenize``), really stopped before the second import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

inspect_log = pytest.importorskip("inspect_ai.log")

from inspect_ai.model import ChatMessageUser, ModelOutput  # noqa: E402

from ctxprobe.cli import main  # noqa: E402
from ctxprobe.harnesses.cases import HarnessCases, harness_spec  # noqa: E402
from ctxprobe.harnesses.inspect_log import MODEL_KEY, SPEC_KEY, TEMPLATE_KEY, TOKENIZER_KEY, TRAINED_KEY  # noqa: E402
from ctxprobe.harnesses.logged import CASE_KEY, case_content  # noqa: E402
from ctxprobe.models import resolve_provider  # noqa: E402
from ctxprobe.sim.server import SimServer  # noqa: E402
from ctxprobe.store import iter_export, open_existing  # noqa: E402
from ctxprobe.tokenizers import resolve_tokenizer  # noqa: E402


def _write_log(path: Path, harness: HarnessCases, *, with_keys: bool = True, edit: bool = False) -> None:
    samples = []
    for i, case in enumerate(harness.cases.values()):
        text = case.expected[0] if i % 3 else "I could not find it."  # some right, some wrong
        content = [m["content"] for m in case.messages]
        if edit and i == 0:
            content[-1] += " (edited)"
        meta: dict[str, Any] = {**harness.sample_metadata(case), **({CASE_KEY: case_content(case)} if with_keys else {})}
        samples.append(inspect_log.EvalSample(
            id=case.case_id, epoch=1, input=[ChatMessageUser(content=c) for c in content], target=list(case.expected),
            output=ModelOutput.from_content(model="m", content=text), metadata=meta))
    spec = harness.spec
    log = inspect_log.EvalLog(eval=inspect_log.EvalSpec(
        created="2026-01-01T00:00:00+00:00", task="ctxprobe/niah", model="openai-api/sim/blind",
        dataset=inspect_log.EvalDataset(name="ctxprobe-niah"), config=inspect_log.EvalConfig(),
        metadata={SPEC_KEY: spec.model_dump(mode="json"), TOKENIZER_KEY: harness.tokenizer_name,
                  MODEL_KEY: "openai-api/sim/blind", TEMPLATE_KEY: harness.chat_template_hash,
                  TRAINED_KEY: harness.trained_context}), status="success", samples=samples)
    inspect_log.write_eval_log(log, str(path), format="json")


def _scores(store: Path) -> tuple[str, dict[str, tuple[float | None, str | None, str]]]:
    with open_existing(store) as s:
        (run,) = s.list_runs()
    return run.run_id, {r["case_id"]: (r["score"], r["outcome"], r["prompt_hash"]) for r in iter_export(run.run_id, store)}


def test_a_log_imports_from_its_own_messages_when_the_tokenizer_is_gone(tmp_path: Path, capsys) -> None:
    tok = resolve_tokenizer("local")
    server = SimServer(resolve_provider("sim:blind-middle", tok), tok)
    url = server.start()
    try:
        name = f"endpoint:{url}?model=blind"
        spec = harness_spec("niah", model=f"openai-compat:blind@{url}", tokenizer=name, lengths="1k,2k",
                            depths="0,0.5,1", reps=1, seed=7)
        harness = HarnessCases(spec, name)
        for with_keys, edit, log in ((True, False, "log.json"), (False, False, "old.json"), (True, True, "edited.json")):
            _write_log(tmp_path / log, harness, with_keys=with_keys, edit=edit)
        assert main(["import-inspect", str(tmp_path / "log.json"), "--store", str(tmp_path / "up.sqlite")]) == 0
        assert "cases read from the log" not in capsys.readouterr().out
    finally:
        server.stop()
    assert main(["import-inspect", str(tmp_path / "log.json"), "--store", str(tmp_path / "down.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "cases read from the log, not rebuilt (cannot reach the tokenizer endpoint" in out
    up, down = _scores(tmp_path / "up.sqlite"), _scores(tmp_path / "down.sqlite")
    assert down == up and len(up[1]) == 6
    assert {o for _, o, _ in up[1].values()} == {"correct", "not_found"}
    with open_existing(tmp_path / "down.sqlite") as s:
        assert s.list_runs()[0].meta.extra.get("cases_from_log") is True
    assert main(["import-inspect", str(tmp_path / "old.json"), "--store", str(tmp_path / "o.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "holds no answer key" in err and "cannot be read from the log" in err and "Traceback" not in err
    assert main(["import-inspect", str(tmp_path / "edited.json"), "--store", str(tmp_path / "e.sqlite")]) == 2
    assert "other messages than the case ctxprobe built" in capsys.readouterr().err
