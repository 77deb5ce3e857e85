"""inspect_ai logs of ctxprobe's tasks, stored as ctxprobe runs (``ctxprobe import-inspect``).

A log (``.eval`` or ``.json``, read with ``inspect_ai.log.read_eval_log``) of a
``ctxprobe/FAMILY`` task names its spec and tokenizer in the task's metadata; its cases
are rebuilt from them (:class:`ctxprobe.harnesses.cases.HarnessCases`), each sample's
input is checked against its case's prompt (the prompt hash), and each sample's output is
scored by ctxprobe's strict rule: a log scored by another scorer is re-scored the same way.
When the cases cannot be rebuilt because the log's ``endpoint:`` tokenizer cannot be
reached, they are read from the log (:mod:`ctxprobe.harnesses.logged`: the messages it
holds, checked by their hash) and the import says so; a log too old to hold its answer
keys is refused in one line.

Usage: inspect reports prompt tokens less those read from or written to a prompt cache
(``input_tokens``); the prompt the server counted is their sum, the inverse of inspect's
own ``openai_completion_usage``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ctxprobe.core.case import prompt_hash
from ctxprobe.errors import CtxprobeError
from ctxprobe.harnesses.cases import HarnessCases, Reply
from ctxprobe.harnesses.importing import CaseSource, Imported, import_replies
from ctxprobe.harnesses.logged import LoggedCases, logged_case
from ctxprobe.spec import make_spec

#: inspect's StopReason -> the OpenAI finish_reason ctxprobe's labels read.
_FINISH = {"stop": "stop", "max_tokens": "length", "model_length": "length", "content_filter": "content_filter",
           "tool_calls": "tool_calls"}
#: The task metadata keys ``ctxprobe.inspect_tasks.tasks`` writes.
SPEC_KEY, TOKENIZER_KEY, MODEL_KEY = "ctxprobe_spec", "ctxprobe_tokenizer", "ctxprobe_model"
#: ... and the tokenizer's chat-template fingerprint and trained context, so a log's cases
#: read back without the tokenizer make the same run.
TEMPLATE_KEY, TRAINED_KEY = "ctxprobe_chat_template_hash", "ctxprobe_trained_context"


def prompt_tokens_of(usage: Any) -> int | None:
    """The prompt tokens the server counted, from inspect's ``ModelUsage`` (None: not reported)."""
    if usage is None:
        return None
    total = int((usage.input_tokens or 0) + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0))
    return total or None  # nothing counted: not reported (never "the prompt was cut to nothing")


def reply_of(sample_id: str, output: Any, error: Any, messages: list[Any] | None = None) -> Reply:
    """One sample's reply from inspect's ``ModelOutput`` (and the sample's error, if any)."""
    if error is not None:
        return Reply(sample_id, None, error=str(getattr(error, "message", error)) or "error",
                     prompt_hash=_hash(messages))
    choice_error = getattr(output, "error", None) if output is not None else None
    if output is None or not getattr(output, "choices", None) or choice_error:
        return Reply(sample_id, None, error=str(choice_error or "no output"), prompt_hash=_hash(messages))
    usage = getattr(output, "usage", None)
    stop = str(output.stop_reason) if getattr(output, "stop_reason", None) else None
    return Reply(sample_id, output.completion, finish_reason=_FINISH.get(stop or "", stop),
                 prompt_tokens=prompt_tokens_of(usage),
                 completion_tokens=int(usage.output_tokens) if usage is not None and usage.output_tokens else None,
                 prompt_hash=_hash(messages))


def _messages(messages: list[Any]) -> list[dict[str, str]]:
    return [{"role": str(m.role), "content": m.text} for m in messages]


def _hash(messages: list[Any] | None) -> str | None:
    if messages is None:
        return None
    return prompt_hash(_messages(messages))


@dataclass(frozen=True)
class InspectRun:
    path: str
    harness: CaseSource
    replies: list[Reply]
    eval_id: str
    model: str
    note: str | None = None  # the cases were read from the log, and why


def read_inspect_log(path: str | Path) -> InspectRun:
    """A log of a ``ctxprobe/FAMILY`` task, its cases rebuilt and its samples' replies."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise CtxprobeError("reading inspect logs needs inspect_ai: pip install 'ctxprobe[inspect]'") from None
    p = Path(path)
    if not p.is_file():
        raise CtxprobeError(f"no inspect log at {p}")
    try:
        log = read_eval_log(str(p), resolve_attachments=True)
    except Exception as err:  # inspect raises many types for a bad file
        raise CtxprobeError(f"cannot read {p} as an inspect log: {str(err).splitlines()[0] if str(err) else err!r}"
                            ) from None
    meta = log.eval.metadata or {}
    if SPEC_KEY not in meta or TOKENIZER_KEY not in meta:
        raise CtxprobeError(f"{p} is a log of task '{log.eval.task}', not of a ctxprobe task (ctxprobe/FAMILY): "
                            "it names no ctxprobe spec")
    epochs = getattr(log.eval.config, "epochs", None) or 1
    if epochs > 1:
        raise CtxprobeError(f"{p} ran {epochs} epochs: each ctxprobe case is answered once (its repetitions are "
                            "other cases); run with -T reps=N instead of --epochs")
    if log.samples is None:
        raise CtxprobeError(f"{p} holds no samples (status {log.status})")
    spec, tok = make_spec(meta[SPEC_KEY]), str(meta[TOKENIZER_KEY])
    note = None
    harness: CaseSource
    try:
        harness = HarnessCases(spec, tok)
        harness.cases  # noqa: B018  # built here: a tokenizer that cannot count fails now
    except CtxprobeError as err:
        if not tok.startswith("endpoint:"):
            raise
        reason = str(err).rstrip(".")
        cases = [logged_case(str(p), s.metadata or {}, _messages(s.input))
                 for s in log.samples if isinstance(s.input, list)]
        harness = LoggedCases(spec, tok, cases, chat_template_hash=meta.get(TEMPLATE_KEY),
                              trained_context=meta.get(TRAINED_KEY))
        note = (f"cases read from the log, not rebuilt ({reason}): the {len(cases)} samples' messages, each checked "
                "against the prompt hash ctxprobe wrote beside it")
    replies = [reply_of(str(s.id), s.output, s.error, s.input if isinstance(s.input, list) else None)
               for s in log.samples]
    return InspectRun(str(p), harness, replies, log.eval.eval_id or log.eval.run_id, str(meta.get(MODEL_KEY) or
                                                                                        log.eval.model), note)


def import_inspect_logs(paths: list[str], store_path: str | Path) -> list[Imported]:
    """``ctxprobe import-inspect LOG...``: one run per log."""
    done = []
    for path in paths:
        run = read_inspect_log(path)
        imp = import_replies(run.harness, run.replies, store_path, source="inspect", source_id=run.eval_id,
                             harness_model=f"inspect:{run.model}",
                             meta={"inspect_log": Path(path).name, **({"cases_from_log": True} if run.note else {})})
        done.append(replace(imp, note=run.note))
    return done
