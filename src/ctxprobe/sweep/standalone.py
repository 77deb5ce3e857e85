"""The scale knobs (executor, build workers, live tokens, plan, prefix sharing) as
function arguments, for tests and benchmarks.

:func:`run_cases` is ``sweep.run_sweep`` (so the same :class:`~ctxprobe.sweep.session.SweepSession`:
preflight, ledger, limits, truncation checks) with an executor callable (e.g. ``execute_ray``
with test hooks), build workers, the live-token gate, an explicit plan and the sharing
flag passed directly. :func:`make_sink` is the storing half of the sweep's sink alone (no
ledger, display or judge), for ``benchmarks/bench_runner_overhead.py`` to time the runner
with scoring and storage but without case building.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.plan.grid import PlannedCase
from ctxprobe.runner.execute import Attempted
from ctxprobe.spec import Spec
from ctxprobe.store import Store

#: An executor with runner.execute.execute's signature (``execute`` or ``execute_ray``).
Executor = Callable[..., Awaitable[int]]



@dataclass(frozen=True)
class StandaloneResult:
    run_id: str
    sent: int
    already_done: int
    stored: int
    peak_live_tokens: int | None


def make_sink(store: Store, run_id: str, families: dict[str, tuple[Any, object]]) -> Callable[[Attempted], None]:
    """The sweep's sink minus the ledger, display and judge: store the case, score, store the reply."""
    from ctxprobe.grading.record import record_response

    def sink(item: Attempted) -> None:
        store.save_case(run_id, item.case)
        record_response(store, run_id, families[item.case.cell.family][0], item)

    return sink


def run_cases(spec: Spec, store_path: str | Path, *, executor: Executor | None = None,
              build_workers: int | None = None, live_tokens: int | None = None,
              planned: list[PlannedCase] | None = None, share_prefix: bool | None = None) -> StandaloneResult:
    """``run_sweep`` with the scale knobs given as arguments (tests and benchmarks): an
    executor callable (e.g. ``execute_ray`` with test hooks), build workers, the live-token
    gate, an explicit plan and the sharing flag. Same run identity, store and resume."""
    from ctxprobe.sweep.run import run_sweep

    update = {k: v for k, v in (("build_workers", build_workers), ("live_tokens", live_tokens),
                                ("share_prefix", share_prefix)) if v is not None}
    spec = spec.model_validate({**spec.model_dump(), **update})
    result = run_sweep(spec, store_path, progress=False, planned=planned, executor=executor)
    with Store(store_path) as store:
        stored = len(store.done_case_ids(result.run_id))
    return StandaloneResult(result.run_id, result.sent, result.already_done, stored, result.peak_live_tokens)
