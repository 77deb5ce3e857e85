"""Replies a harness gathered, scored and stored as a ctxprobe run.

The run's cases are rebuilt from its spec by ctxprobe's builder (the same ids, prompts and
token counts ``ctxprobe run`` stores); a reply whose harness says it sent another prompt
(a different prompt hash) is refused, so a run never pairs an answer with the wrong case.
Each reply is scored by its family's strict rule (:func:`ctxprobe.harnesses.cases.score_reply`)
and stored like a sweep's response, so ``report``, ``compare``, ``check`` and ``failures``
read the run as any other.

The run's id is derived from the spec's identity and the harness's own id of its
evaluation: importing the same log twice stores nothing new, and an imported run never
mixes with the ``ctxprobe run`` of the same spec in one store.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ctxprobe._version import __version__
from ctxprobe.cases.builder import BUILDER_VERSION, SHARED, INDEPENDENT
from ctxprobe.errors import CtxprobeError
from ctxprobe.core.case import Case
from ctxprobe.core.outcome import Scored
from ctxprobe.harnesses.cases import Reply
from ctxprobe.spec import Spec
from ctxprobe.store import RunMeta, Store, StoredResponse


class CaseSource(Protocol):
    """The cases replies answer: rebuilt from a spec (``cases.HarnessCases``) or read from
    a stored run (``stored.StoredCases``)."""

    spec: Spec
    tokenizer_name: str
    chat_template_hash: str | None
    trained_context: int | None

    @property
    def cases(self) -> dict[str, Case]: ...

    def score(self, reply: Reply) -> tuple[float | None, Scored]: ...


@dataclass(frozen=True)
class Imported:
    run_id: str
    planned: int  # cases the spec builds
    answered: int  # replies stored with a final outcome
    outcomes: dict[str, int] = field(default_factory=dict)
    resumed: bool = False  # the run was already in the store (this import stored only what was missing)
    note: str | None = None  # how the cases were found, when not rebuilt from the spec


def imported_run_id(harness: CaseSource, source: str, source_id: str) -> str:
    identity = harness.spec.identity(tokenizer=harness.tokenizer_name, version=__version__,
                                     tokenizer_fingerprint=harness.chat_template_hash
                                     if harness.tokenizer_name.startswith("endpoint:") else None)
    blob = json.dumps({"identity": identity, "source": source, "id": source_id}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def import_replies(harness: CaseSource, replies: Iterable[Reply], store_path: str | Path, *, source: str,
                   source_id: str, harness_model: str, meta: dict[str, Any] | None = None,
                   mismatch_hint: str = "was it built for another tokenizer?") -> Imported:
    """Store ``replies`` to ``harness``'s cases as one run (see the module docstring)."""
    cases = harness.cases
    scored = []
    for reply in replies:
        case = cases.get(reply.case_id)
        if case is None:
            raise CtxprobeError(f"{source}: sample '{reply.case_id}' is no case of the spec it names "
                                f"({', '.join(harness.spec.families)}, lengths {harness.spec.lengths}); "
                                "was the log edited?")
        if reply.prompt_hash is not None and reply.prompt_hash != case.prompt_hash:
            raise CtxprobeError(f"{source}: sample '{reply.case_id}' was sent another prompt than its case "
                                f"(tokenizer {harness.tokenizer_name}): {mismatch_hint}")
        scored.append((case, reply, harness.score(reply)))
    if not scored:
        raise CtxprobeError(f"{source}: no samples to import")
    run_id = imported_run_id(harness, source, source_id)
    spec = harness.spec
    # keys RunMeta does not know (where the run came from) are kept in its ``extra``
    run_meta = RunMeta.from_json({"imported_from": source, "harness_model": harness_model, "planned_cases": len(cases),
                "chat_template_hash": harness.chat_template_hash, "trained_context": harness.trained_context,
                "prefix_sharing": SHARED if spec.share_prefix else INDEPENDENT, "builder_version": BUILDER_VERSION,
                **(meta or {})})
    with Store(store_path) as store:
        resumed = store.ensure_run(run_id, model=harness_model, tokenizer=harness.tokenizer_name,
                                   family=",".join(spec.families), version=__version__, spec=spec.model_dump(),
                                   meta=run_meta)
        for case in cases.values():
            store.save_case(run_id, case)
        for case, reply, (score, label) in scored:
            # the store's one write path scrubs the reply: a key a model echoed never lands in clear text
            store.save_response(run_id, case.case_id, StoredResponse(
                output=reply.output, finish_reason=reply.finish_reason, reported_prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens, latency_s=None, attempts=1, error=reply.error,
                score=score, outcome=label.outcome, detail=label.detail))
        done = store.done_case_ids(run_id)
        store.update_run(run_id, status="complete" if not set(cases) - done else "incomplete")
        outcomes = store.outcome_counts(run_id)
    return Imported(run_id, len(cases), len(done), dict(Counter(outcomes)), resumed)
