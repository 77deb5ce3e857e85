"""A minimal mirror of ``sweep._run`` with pluggable executor, builder and memory bounds.

Why it exists: issue 8's pieces (parallel building, slimmed cases, the memory gate, the
Ray executor) must be exercised through the real store before the lead wires them into
``sweep.py``. This module runs the same steps as ``sweep._run`` — same run id, same
resume rule (``Store.done_case_ids``), same scoring (``score_response``) and the same
``save_case`` / ``save_response`` calls from one thread — with none of the CLI extras
(preflight, progress bar, spending ledger). It is a test and benchmark harness, and the
reference for the wiring described in :data:`WIRING`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe._version import __version__
from ctxprobe.plan import PlannedCase, planned_cases
from ctxprobe.runner.execute import Attempted, RunnerConfig, Sink, execute
from ctxprobe.runner.memory import IdsPolicy, MemoryGate, ids_policy, slim_case
from ctxprobe.runner.parallel import (INDEPENDENT, SHARED, BuildSettings, CaseBuilder, build_cases,
                                      share_prefix_of, tokenizer_name_of)
from ctxprobe.scoring import score_response
from ctxprobe.spec import Spec
from ctxprobe.store import Store
from ctxprobe.tasks.case import Case

#: An executor with runner.execute.execute's signature (``execute`` or ``execute_ray``).
Executor = Callable[..., Awaitable[int]]

WIRING = """
sweep._run(..., executor=execute, build_workers=1, live_tokens=None):
    meta["prefix_sharing"] = "shared" if spec.share_prefix else "independent"
    builder = CaseBuilder(BuildSettings.of(spec, tokenizer_name), families)  # reuse resolved families
    stream = build_cases(spec, todo, build_workers, tokenizer=tokenizer_name, builder=builder)
    policy = ids_policy(provider)
    def cases(): for case in stream: slim_case(case, policy); pending_cases.append(case); yield case
    gate = MemoryGate(live_tokens)          # when live_tokens is set
    it, sink, admit = gate.wrap(cases()), gate.wrap_sink(sink), gate.wrap_admit(ledger.admit)
    sent = await executor(it, provider_or_spec, sink, cfg, admit=admit)
"""


@dataclass(frozen=True)
class StandaloneResult:
    run_id: str
    sent: int
    already_done: int
    stored: int
    peak_live_tokens: int | None


def make_sink(store: Store, run_id: str, families: dict[str, tuple[Any, object]],
              pending: list[Case]) -> Callable[[Attempted], None]:
    """The sweep's sink minus the ledger and display: store the case, score, store the reply."""

    def sink(item: Attempted) -> None:
        while pending:
            store.save_case(run_id, pending.pop(0))
        r = item.result
        score, scored = score_response(
            families[item.case.cell.family][0], item.case, text=r.text if r else None,
            finish_reason=r.finish_reason if r else None, reported_prompt_tokens=r.prompt_tokens if r else None,
            error=item.error)
        store.save_response(
            run_id, item.case.case_id, output=r.text if r else None, finish_reason=r.finish_reason if r else None,
            reported_prompt_tokens=r.prompt_tokens if r else None,
            completion_tokens=r.completion_tokens if r else None, latency_s=round(item.latency_s, 4),
            attempts=item.attempts, error=item.error, score=score, outcome=scored.outcome, detail=scored.detail)

    return sink


async def arun_cases(spec: Spec, store_path: str | Path, *, executor: Executor = execute,
                     provider: Any = None, build_workers: int = 1, live_tokens: int | None = None,
                     ids: IdsPolicy | None = None, planned: list[PlannedCase] | None = None) -> StandaloneResult:
    """Run (or resume) ``spec`` into ``store_path`` through ``executor``.

    ``provider`` is what the executor is given: a :class:`Provider` for ``execute``, a
    model spec string (or list of them) for ``execute_ray``; by default the spec's model
    resolved in process."""
    from ctxprobe.models import resolve_provider
    from ctxprobe.tokenizers import resolve_tokenizer

    tokenizer_name = tokenizer_name_of(spec)
    settings = BuildSettings.of(spec, tokenizer_name)
    builder = CaseBuilder(settings)
    owned = provider is None
    if owned:
        provider = resolve_provider(spec.model, resolve_tokenizer(tokenizer_name))
    store = Store(store_path)
    try:
        run_id = spec.run_id(tokenizer=tokenizer_name, version=__version__)
        meta = {"prefix_sharing": SHARED if share_prefix_of(spec) else INDEPENDENT}
        store.ensure_run(run_id, model=spec.model, tokenizer=tokenizer_name, family=",".join(spec.families),
                         version=__version__, spec=spec.model_dump(), meta=meta)
        done = store.done_case_ids(run_id)
        plan = list(planned) if planned is not None else list(planned_cases(spec))
        todo = [p for p in plan if p.case_id not in done]
        policy: IdsPolicy = ids or (ids_policy(provider) if not isinstance(provider, (str, list)) else "drop")
        pending: list[Case] = []

        def cases() -> Iterator[Case]:
            for case in build_cases(spec, todo, build_workers, tokenizer=tokenizer_name, builder=builder):
                pending.append(slim_case(case, policy))
                yield pending[-1]
                del case

        gate = MemoryGate(live_tokens) if live_tokens else None
        stream = gate.wrap(cases()) if gate else cases()
        sink: Sink = make_sink(store, run_id, builder.families, pending)
        if gate is not None:
            sink = gate.wrap_sink(sink)
        cfg = RunnerConfig(concurrency=spec.concurrency, timeout=spec.timeout, retries=spec.retries,
                           max_tokens=spec.decoding.max_tokens, temperature=spec.decoding.temperature,
                           seed=spec.decoding.seed)
        sent = await executor(stream, provider, sink, cfg)
        stored = len(store.done_case_ids(run_id))
        grid = {p.case_id for p in plan}
        store.update_run(run_id, status="complete" if not grid - store.done_case_ids(run_id) else "incomplete")
        return StandaloneResult(run_id, sent, len(plan) - len(todo), stored, gate.peak_tokens if gate else None)
    finally:
        store.close()
        if owned:
            await provider.aclose()


def run_cases(spec: Spec, store_path: str | Path, **kwargs: Any) -> StandaloneResult:
    return asyncio.run(arun_cases(spec, store_path, **kwargs))
