"""The case builder is part of a case's identity.

A run id and its case ids name *what* is asked (spec, cell, repetition); the prompt a case
holds is what the builder made of that. When the builder changes (new packer, new family
text), an unchanged spec builds other prompts under the same ids, so a run stored before
the change and resumed after it would hold prompts of two builders — and nothing would say
so. Two checks stop that, before anything is sent on a resume:

- the builder version stored with the run (``meta["builder_version"]``, see
  :data:`ctxprobe.cases.builder.BUILDER_VERSION`) must be this builder's;
- one stored case (the shortest, cheapest to build) is rebuilt and its prompt hash must
  equal the stored one: this catches runs stored before versions were recorded, and a
  prompt change whose version bump was forgotten.

A refusal is one line that says how to keep the old prompts (export the run as a pack and
re-send it with ``run --cases``) or start a new run with this builder (another store).
Run ids do not change: the version lives in the run's meta, not in its identity.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Protocol

from ctxprobe.cases.builder import BUILDER_VERSION
from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.grid import PlannedCase
from ctxprobe.core.case import Case, Cell
from ctxprobe.core.runmeta import RunMeta

class RunStore(Protocol):
    """What the check reads and writes (``ctxprobe.store.Store`` has these)."""

    def get_run(self, run_id: str) -> Any: ...
    def sample_case(self, run_id: str) -> tuple[str, str, int, float, int, str] | None: ...
    def done_case_ids(self, run_id: str) -> set[str]: ...
    def update_run(self, run_id: str, *, status: str | None = None, meta: RunMeta | None = None) -> None: ...


def refusal(run_id: str, why: str) -> CtxprobeError:
    return CtxprobeError(
        f"run {run_id} cannot be resumed: {why}, so resuming would mix prompts of two builders; keep its "
        f"prompts with `ctxprobe export {run_id} --jsonl -o {run_id}.jsonl` and `ctxprobe run --cases "
        f"{run_id}.jsonl --model MODEL` (re-sends the stored cases), or start a new run with this builder: "
        "the same command with another --store")


def check_builder(store: RunStore, run_id: str, build: Callable[[PlannedCase], Case], planned: Collection[str],
                  *, resumed: bool) -> None:
    """Refuse to resume ``run_id`` when its cases would now be built differently; record
    this builder's version on a new run (or on an old one the check proved the same).

    ``build`` builds one planned case as the sweep would; ``planned`` are the case ids this
    session means to send (nothing left to send: nothing can mix, no check)."""
    if not resumed:
        store.update_run(run_id, meta=RunMeta(builder_version=BUILDER_VERSION))
        return
    run = store.get_run(run_id)
    stored = run.meta.builder_version if run is not None else None
    pending = set(planned) - store.done_case_ids(run_id)
    if not pending:
        return
    if stored is not None and stored != BUILDER_VERSION:
        raise refusal(run_id, f"its cases were built by case builder {stored} and this ctxprobe's builder is "
                              f"{BUILDER_VERSION}")
    sample = store.sample_case(run_id)
    if sample is not None:
        case_id, family, length, depth, rep, prompt_hash = sample
        rebuilt = build(PlannedCase(Cell(family, length, depth), rep))
        if rebuilt.prompt_hash != prompt_hash:
            was = "an earlier case builder" if stored is None else f"case builder {stored}"
            raise refusal(run_id, f"its stored case {case_id} (built by {was}) would now be built with a "
                                  "different prompt")
    if stored is None:
        store.update_run(run_id, meta=RunMeta(builder_version=BUILDER_VERSION))
