"""Building cases on several cores, streamed in plan order, identical to the serial build.

Why a process pool: building a long case is CPU-bound Python plus tokenizer calls (a
1M-token niah case takes ~4-11 s here), so threads do not scale. Why whole groups per task:
every depth of a (family, length, repetition) group shares one filler pool (see
:class:`ctxprobe.haystack.pool_cache.PoolCache`); sending a group to one worker keeps that sharing,
so a worker counts each filler sentence once, as the serial build does.

Results are identical to the serial build because ``Family.generate`` is deterministic in
its arguments: the pool a case draws from is a pure function of its group seed, whether it
was built fresh or reused. Cases stream in plan order with a bounded look-ahead (at most
``workers + lookahead`` groups in flight), so memory stays a few groups' worth however
large the grid.

Prefix sharing: :func:`generation_seed` is the one place that decides whether the
depths of a group share their filler, keys and values (the default; a server's prefix cache
then reuses the text before each needle) or are fully independent cases.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import multiprocessing
import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.plan.grid import PlannedCase
from ctxprobe.spec import PromptLayout, Spec
from ctxprobe.cases.families import make_labelled
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.case import derive_seed, Case, Cell
from ctxprobe.core.family import Family

#: The case builder's version, stored with every run (``meta["builder_version"]``): bump it in
#: the same change that alters any prompt an unchanged spec builds (family texts, filler,
#: packing, sizing, chat layout), so a run stored before the change is never resumed with
#: prompts of two builders (:func:`ctxprobe.cases.identity.check_builder`).
#: 1: up to b7405e5; 2: the budget-driven packer (its fill tolerance changed most prompts);
#: 3: needles placed at the depth recorded (the haystack without the needle) and RULER's
#: qa/fwe/cwe/vt rules; 4: the packer aims higher by no more than a prompt is short of its
#: target (approx's rounded-up counts see-sawed past it: 12 encodes a case, now 3-7).
BUILDER_VERSION = 4

#: Run-meta value recording which mode built the cases (``meta["prefix_sharing"]``).
SHARED, INDEPENDENT = "shared", "independent"


def generation_seed(spec_seed: int, cell: Cell, share_prefix: bool = True) -> int:
    """The seed handed to ``Family.generate`` for a cell.

    Shared (default): the spec seed itself, so every depth of a (length, repetition) group
    derives the same group seed — same filler, keys and values — and stored cases stay
    exactly what they were before this option existed. Independent: a seed that also
    depends on the depth, so each case gets its own filler, keys and values (no pairing
    across depths, no prefix reuse)."""
    if share_prefix:
        return spec_seed
    return derive_seed(spec_seed, "independent", f"{cell.depth:g}")


def share_prefix_of(spec: Spec) -> bool:
    """The spec's sharing flag (``share_prefix``, default True until the lead adds it)."""
    return bool(getattr(spec, "share_prefix", True))


def tokenizer_name_of(spec: Spec) -> str:
    from ctxprobe.tokenizers import infer_tokenizer

    return spec.tokenizer or infer_tokenizer(spec.model)


@dataclass(frozen=True)
class BuildSettings:
    """Everything a worker process needs to rebuild the families (picklable)."""

    tokenizer: str
    haystack: str | None
    families: dict[str, dict[str, Any]]
    seed: int
    share_prefix: bool
    layout: PromptLayout = field(default_factory=PromptLayout)

    @classmethod
    def of(cls, spec: Spec, tokenizer: str | None = None) -> BuildSettings:
        return cls(tokenizer or tokenizer_name_of(spec), spec.haystack, dict(spec.families), spec.seed,
                   share_prefix_of(spec), spec.layout)


class CaseBuilder:
    """Families built once (per process), generating cases for planned (cell, rep) pairs."""

    def __init__(self, settings: BuildSettings, families: dict[str, tuple[Family, object]] | None = None) -> None:
        self.settings = settings
        if families is None:
            from ctxprobe.tokenizers import resolve_tokenizer

            ctx = BuildContext(tokenizer=resolve_tokenizer(settings.tokenizer), haystack=settings.haystack,
                               layout=settings.layout)
            families = {label: make_labelled(label, params, ctx) for label, params in settings.families.items()}
        self.families = families

    def build(self, p: PlannedCase) -> Case:
        family, params = self.families[p.cell.family]
        # the reasoning budget is how a case is sent, not what it asks: every budget of a
        # case gets the same prompt (built without it), so budgets are paired
        cell = p.cell if p.cell.reasoning_budget is None else dataclasses.replace(p.cell, reasoning_budget=None)
        seed = generation_seed(self.settings.seed, cell, self.settings.share_prefix)
        case = family.generate(cell, p.rep, seed=seed, params=params)  # type: ignore[arg-type]  # params: object in the map
        if p.cell.reasoning_budget is not None:
            case.cell = p.cell
        case.sample = p.sample  # a variant's samples: the same prompt, sent k times
        return case


# -- worker process side -----------------------------------------------------------------
_WORKER: CaseBuilder | None = None


def _init_worker(settings: BuildSettings, encodes: Any = None) -> None:
    global _WORKER
    from ctxprobe.haystack.packer import compact_ids

    compact_ids(True, encodes)  # ids go back as 4-byte arrays anyway: encode them so; and
    # a bounded number of full-prompt encodes at a time across the workers
    _WORKER = CaseBuilder(settings)  # the tokenizer is loaded once per worker


def _build_group(group: list[PlannedCase], ids: str = "compact") -> list[Case]:
    """A group's cases, each made compact as soon as it is built (ids packed into 4-byte
    arrays, or dropped for providers that never read them): a 1M-token case crosses the
    process boundary as ~9 MB instead of ~45 MB, and the worker holds no list of ids
    while it builds the next depth."""
    assert _WORKER is not None, "worker not initialised"
    from ctxprobe.cases.memory import IdsPolicy, slim_case

    policy: IdsPolicy = "drop" if ids == "drop" else "compact"
    cases = []
    for p in group:
        cases.append(slim_case(_WORKER.build(p), policy))
        _give_back_memory()
    return cases


def _give_back_memory() -> None:
    """Return freed heap pages to the system (glibc ``malloc_trim``): a 1M-token encode
    leaves ~100 MB of freed but mapped heap behind, which a worker would otherwise keep
    for its whole life. A no-op where there is no glibc."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None


def _restore(case: Case, ids: str) -> Case:
    """Ids back to a list for providers that need one (llama.cpp), on the consumer's side."""
    if ids == "keep" and case.prompt_ids is not None and not isinstance(case.prompt_ids, list):
        case.prompt_ids = list(case.prompt_ids)
    return case


# -- driver side ---------------------------------------------------------------------------
def groups_of(planned: Iterable[PlannedCase]) -> Iterator[list[PlannedCase]]:
    """Consecutive planned cases of one (family, length, rep) group, in plan order."""
    group: list[PlannedCase] = []
    key: tuple[str, int, int] | None = None
    for p in planned:
        k = (p.cell.family, p.cell.length, p.rep)
        if group and k != key:
            yield group
            group = []
        key = k
        group.append(p)
    if group:
        yield group


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def build_cases(spec: Spec, planned: Iterable[PlannedCase], workers: int = 1, *, tokenizer: str | None = None,
                lookahead: int = 0, builder: CaseBuilder | None = None,
                settings: BuildSettings | None = None, ids: str = "keep") -> Iterator[Case]:
    """Cases for ``planned``, in order; built on ``workers`` processes when > 1.

    ``workers=0`` means all cores. ``lookahead`` bounds how many groups beyond one per
    worker may be built ahead of the consumer. ``builder`` reuses an in-process builder
    (the serial path, e.g. the sweep's already-resolved families). Closing the iterator
    early cancels pending work and stops the pool. ``settings`` overrides what is read
    from ``spec`` (e.g. the sharing flag). ``ids`` is what the consumer needs of
    ``prompt_ids`` (:func:`ctxprobe.models.ids_policy`): workers hand back compact
    cases either way, and ``"keep"`` turns the ids back into a list as each case is yielded."""
    settings = settings or (builder.settings if builder is not None else BuildSettings.of(spec, tokenizer))
    n = default_workers() if workers == 0 else max(1, workers)
    if n == 1:
        local = builder or CaseBuilder(settings)
        for p in planned:
            yield local.build(p)
        return
    # spawn, not fork: the parent may hold llama.cpp state and threads that fork would copy
    ctx = multiprocessing.get_context("spawn")
    # full-prompt encodes at once: half the cores (the sweep's own process needs the rest);
    # each 1M-token llama.cpp encode holds ~150 MB while it runs
    encodes = ctx.BoundedSemaphore(max(1, min(n, default_workers() // 2)))
    pool = cf.ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init_worker,
                                  initargs=(settings, encodes))
    pending: deque[cf.Future[list[Case]]] = deque()
    groups = groups_of(planned)
    try:
        for group in groups:
            pending.append(pool.submit(_build_group, group, ids))
            if len(pending) >= n + max(0, lookahead):
                break
        while pending:
            cases = pending.popleft().result()
            nxt = next(groups, None)
            if nxt is not None:
                pending.append(pool.submit(_build_group, nxt, ids))
            cases.reverse()
            while cases:
                yield _restore(cases.pop(), ids)  # drop each case from the list as it is handed on
    finally:
        for f in pending:
            f.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
