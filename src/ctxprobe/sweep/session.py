"""One orchestration path: every way of running cases goes through a :class:`SweepSession`.

``ctxprobe run`` (:func:`ctxprobe.sweep.run.run_sweep`), ``run --cases PACK``
(:mod:`ctxprobe.sweep.packs`), adaptive rounds (which call ``run_sweep`` with chosen
cases) and the in-process harness (:mod:`ctxprobe.sweep.standalone`) differ only in
where their cases come from and how their run is named. Everything else is here, once,
in the order a session takes:

1. :meth:`SweepSession.resolve` — the provider, behind the spec's call policy;
2. :meth:`SweepSession.preflight` — probe the serving path (exact token counts make any
   shortfall truncation), then :meth:`SweepSession.window_error` per case;
3. :meth:`SweepSession.open_ledger` and :meth:`SweepSession.open_judge` — the spending
   cap and the calibrated judge, both before the store is touched;
4. :meth:`SweepSession.run` — store the run (or resume it), send what is not done
   through the claims of :mod:`.claiming`, score and store each response as it
   arrives (:meth:`SweepSession.sink`), and finish the run's status.

The caller describes its cases with :class:`SessionRun` (the run's identity and metadata)
and :class:`Work` (the planned items, their ids and how each becomes a :class:`Case`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Hashable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from rich.console import Console
from rich.text import Text

from ctxprobe._version import __version__
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import ids_policy, resolve_provider
from ctxprobe.models.base import Provider
from ctxprobe.models.batch import batch_api_for
from ctxprobe.core.catalog import check_model, context_window, model_info
from ctxprobe.prices.table import load_prices, price_for
from ctxprobe.plan.scheduling import chain_lanes
from ctxprobe.runner import Attempted, RunnerConfig, execute
from ctxprobe.runner.batch import execute_batch
from ctxprobe.runner.budget import Ledger
from ctxprobe.runner.client import CallPolicy, ModelClient
from ctxprobe.cases.memory import IdsPolicy, MemoryGate, slim_case
from ctxprobe.grading.record import record_response
from ctxprobe.spec import Spec
from ctxprobe.store import Preflight, RunMeta, Store
from ctxprobe.store.batches import StoreJournal, batch_summary
from ctxprobe.store.claims import Coordinator
from ctxprobe.sweep.claiming import finish_run, send_claimed
from ctxprobe.sweep.display import Display
from ctxprobe.sweep.preflight import PreflightReport, run_preflight
from ctxprobe.core.family import Family
from ctxprobe.core.case import Case
from ctxprobe.core.case_meta import case_meta
from ctxprobe.core.variant import VariantDecoding, decoding_of
from ctxprobe.tokenizers.base import Tokenizer

T = TypeVar("T")
#: ``runner.execute.execute`` or anything with its signature (``execute_ray``).
Executor = Callable[..., Awaitable[int]]
#: Spec fields recorded with a run as how it was sent (never part of its identity).
TRANSPORT_META = ("concurrency", "timeout", "retries", "rpm", "tpm", "max_cost", "batch", "cache_prompt", "pricing",
                  "slots")


@dataclass(frozen=True)
class SessionRun:
    """The run a session stores into: its id and the row written when it is new (the
    stored row, read back, is :class:`ctxprobe.store.RunRecord`)."""

    run_id: str
    model: str
    tokenizer: str
    family: str
    spec: dict[str, Any]
    meta: RunMeta


@dataclass
class Work(Generic[T]):
    """What a session sends: ``items`` in order, each named by ``key`` (its case id) and
    turned into a case by ``build`` (lazily, in the runner's producer thread)."""

    items: list[T]
    grid: set[str]  # case ids that make the run complete
    key: Callable[[T], str]
    build: Callable[[Iterator[T]], Iterator[Case]]
    group: Callable[[T], Hashable] | None = None  # claim items of one group together
    counted: set[str] | None = None  # case ids shown as planned (default: the grid)
    units: dict[str, str] = field(default_factory=dict)  # family label -> "entries" (progress bar)
    #: Checks the stored run before anything is sent (store, run id, resumed); raises to refuse.
    verify: Callable[[Store, str, bool], None] | None = None


@dataclass(frozen=True)
class SessionResult:
    run_id: str
    resumed: bool
    sent: int
    already_done: int
    store_path: Path
    peak_live_tokens: int | None = None  # with spec.live_tokens: the most tokens held in built cases


def warn(console: Console, message: str) -> None:
    console.print(Text.assemble(("warning: ", "bold yellow"), message))


class SweepSession:
    """One session of sending cases to ``spec.model`` (see the module docstring)."""

    def __init__(self, spec: Spec, tokenizer_name: str, tokenizer: Tokenizer,
                 families: dict[str, tuple[Family, object]], *, console: Console | None = None,
                 progress: bool = True, executor: Executor | None = None,
                 confirm_cancel: Callable[[str], bool] | None = None) -> None:
        self.spec = spec
        self.tokenizer_name = tokenizer_name
        self.tokenizer = tokenizer
        self.families = families
        self.console = console or Console(stderr=True)
        self.progress = progress
        self.executor = executor
        #: With --batch, asked once on Ctrl-C whether to cancel the provider's batches
        #: (None: not interactive, they are left running for a rerun to collect).
        self.confirm_cancel = confirm_cancel
        self._provider: Provider | None = None
        self.checked: PreflightReport | None = None
        self.ledger: Ledger | None = None
        self.judge: Any = None  # a JudgeScorer when some family grades with a judge
        self.judge_calibration: dict[str, Any] | None = None
        self._judge_provider: Provider | None = None

    # 1. resolve ---------------------------------------------------------------------------
    def resolve(self, n_ctx: int | None = None) -> Provider:
        table = load_prices(self.spec.prices)
        note = check_model(self.spec.model, table)  # a retired model: refused here
        if note:
            warn(self.console, note)
        self._provider = resolve_provider(self.spec.model, self.tokenizer, n_ctx=n_ctx)
        if self._provider.context_window is None:
            # the catalog's window (Claude's 200K, Gemini's 1M...): lengths past it are refused
            self._provider.context_window = context_window(self.spec.model, table)
        if self.spec.batch:
            batch_api_for(self._provider)  # a provider without a batch API: refused before anything is stored
        return self._provider

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            raise RuntimeError("resolve() the session's provider first")
        return self._provider

    @property
    def ids(self) -> IdsPolicy:
        """What the provider needs of a case's prompt ids."""
        return ids_policy(self.provider)

    # 2. preflight and checks -------------------------------------------------------------
    async def preflight(self) -> PreflightReport | None:
        self.checked = await run_preflight(self.provider, self.tokenizer, self.spec)
        for message in self.checked.warnings if self.checked else ():
            warn(self.console, message)
        return self.checked

    @property
    def exact_counts(self) -> bool:
        """Preflight saw the server count tokens exactly as we do: any shortfall is truncation."""
        return self.checked is not None and self.checked.exact_counts

    def window_error(self, case: Case) -> str | None:
        """Why ``case`` cannot be sent within the model's window (None when it fits)."""
        window = self.provider.context_window
        out_tokens = (case.max_tokens or self.spec.decoding.max_tokens) + (case.cell.reasoning_budget or 0)
        if window and case.token_count + out_tokens > window and not self.spec.allow_beyond_window:
            return (f"case {case.case_id} has {case.token_count} tokens + {out_tokens} output, beyond "
                    f"{self.spec.model}'s window of {window}; use smaller lengths or pass --allow-beyond-window")
        return None

    def checked_case(self, case: Case) -> Case:
        """``case`` slimmed to what the provider needs, after the window check."""
        why = self.window_error(case)
        if why:
            raise CtxprobeError(why)
        return slim_case(case, self.ids)

    # 3. ledger and judge -----------------------------------------------------------------
    def open_ledger(self) -> Ledger:
        spec = self.spec
        # a run sent as provider batches is billed at batch prices
        batch = spec.batch
        if spec.pricing_mode == "batch" and not batch:
            raise CtxprobeError("--pricing batch prices a run sent as provider batches; this one is sent request by "
                                "request: use --pricing cached or on-demand (ctxprobe plan prints all three)")
        table = load_prices(spec.prices)
        price = price_for(spec.model, table)  # a batch run's at its batch price: the plan's rule (Ledger)
        self.ledger = Ledger(spec.model, price, max_cost=spec.max_cost, spent=0.0, max_tokens=spec.decoding.max_tokens,
                             batch=batch, tiers=model_info(spec.model, table))
        return self.ledger

    async def open_judge(self, wanted: list[str]) -> Any:
        """The calibrated judge for the family labels in ``wanted`` that grade with one
        (None when none does); its calibration report goes into the run's metadata."""
        if not wanted:
            return None
        spec = self.spec
        if not spec.judge:
            raise CtxprobeError(f"family {wanted[0]} grades with a judge (match: judge): name one with --judge MODEL")
        from ctxprobe.grading.judge import JudgeScorer, acalibrate, load_labelled_set, resolve_judge, synthetic_labelled_set

        self._judge_provider = resolve_judge(spec.judge, self.tokenizer)
        # the judge's own calls: retries and timeout from the spec, its own concurrency
        # (the spec's rpm/tpm are the measured model's limits, not the judge's)
        client = ModelClient(self._judge_provider, CallPolicy(concurrency=spec.concurrency, timeout=spec.timeout,
                                                              retries=spec.retries))
        items = load_labelled_set(spec.judge_labels) if spec.judge_labels else synthetic_labelled_set()
        report = await acalibrate(client, items)
        self.judge_calibration = report.to_dict()
        self.console.print(f"judge {spec.judge}: {report.summary()}", highlight=False)
        self.judge = JudgeScorer(client, report, force=spec.force_judge)
        return self.judge

    # 4. store, send, finish --------------------------------------------------------------
    def _start(self, store: Store, record: SessionRun, work: Work[T]) -> bool:
        # the serving path and the judge as of this session
        session = RunMeta(preflight=Preflight.from_json(self.checked.to_dict()) if self.checked is not None else None,
                          judge_calibration=self.judge_calibration)
        meta = replace(record.meta, preflight=session.preflight or record.meta.preflight,
                       judge_calibration=session.judge_calibration or record.meta.judge_calibration)
        resumed = store.ensure_run(record.run_id, model=record.model, tokenizer=record.tokenizer,
                                   family=record.family, version=__version__, spec=record.spec, meta=meta)
        if work.verify is not None:
            work.verify(store, record.run_id, resumed)
        assert self.ledger is not None
        self.ledger.spent = store.spent(record.run_id)
        if resumed:
            store.update_run(record.run_id, meta=session)
        planned = _planned_count(store, record.run_id, work.counted if work.counted is not None else work.grid)
        store.update_run(record.run_id, status="running", meta=RunMeta(
            planned_cases=planned, transport={k: getattr(self.spec, k) for k in TRANSPORT_META}))
        return resumed

    def sink(self, store: Store, run_id: str, coord: Coordinator,
             display: Display) -> Callable[[Attempted], Awaitable[None]]:
        """Store the case, judge it if asked, settle its cost, score and store the reply."""
        ledger, tokenizer = self.ledger, self.tokenizer
        assert ledger is not None

        async def sink(item: Attempted) -> None:
            store.save_case(run_id, item.case)
            r = item.result
            judged = None
            if self.judge is not None and r is not None and r.text is not None and case_meta(item.case.meta).get("match") == "judge":
                judged = await self.judge.ascore(item.case, r.text)  # a failed judge call is an error grade
            if r is not None and r.prompt_tokens:
                tokenizer.observe(item.case.messages, r.prompt_tokens)  # an approximate counter learns from the server
            cost = ledger.settle(item.case, r.prompt_tokens if r else 0, r.completion_tokens if r else 0,
                                 cached=_int(r.extra.get("cached_prompt_tokens")) if r else None,
                                 written=_int(r.extra.get("cache_write_tokens")) if r else None)
            score, scored = record_response(store, run_id, self.families[item.case.cell.family][0], item,
                                            judged=judged, cost_usd=cost, exact_counts=self.exact_counts)
            coord.settle(item.case.case_id)
            display.update(item.case, score, scored.outcome,
                           ledger.spent if ledger.price and ledger.price.input else None)

        return sink

    def runner_config(self) -> RunnerConfig:
        spec = self.spec
        return RunnerConfig(concurrency=spec.concurrency, timeout=spec.timeout, retries=spec.retries,
                            max_tokens=spec.decoding.max_tokens, temperature=spec.decoding.temperature,
                            seed=spec.decoding.seed, top_p=spec.decoding.top_p, requests_per_minute=spec.rpm,
                            tokens_per_minute=spec.tpm, lanes=self.lanes, variants=variant_decodings(spec))

    @property
    def lanes(self) -> int | None:
        """Prefix chains in flight at once (one per server slot, at most the concurrency),
        None: cases are sent one by one to whichever worker is free. ``--slots`` wins over
        what the server reports; ``--slots 0`` turns the scheduling off
        (:func:`ctxprobe.plan.scheduling.chain_lanes`, the rule ``plan`` states too)."""
        return chain_lanes(self.spec, self.provider.slots)

    async def run(self, store: Store, record: SessionRun, work: Work[T]) -> SessionResult:
        """Store (or resume) ``record``'s run and send every item of ``work`` not yet done."""
        spec, run_id = self.spec, record.run_id
        if self.ledger is None:
            self.open_ledger()
        ledger = self.ledger
        assert ledger is not None
        in_batches = batch_summary(store.db, run_id) if not spec.batch else None
        if in_batches:  # sent live, its cases would be answered (and billed) twice
            raise CtxprobeError(f"run {run_id} has provider batches waiting ({in_batches}): rerun with --batch to "
                                "collect them instead of sending their cases again")
        resumed = self._start(store, record, work)
        done = store.done_case_ids(run_id)
        todo = [x for x in work.items if work.key(x) not in done]
        # Other processes may run this on this store: every case is claimed before it is
        # built and sent; cases another live process holds are waited for, or taken over.
        coord = Coordinator(store.path, run_id)  # its session starts inside the try below
        display = Display(len(work.items), len(work.items) - len(todo), self.progress, self.console, work.units)
        sink = self.sink(store, run_id, coord, display)
        cfg = self.runner_config()
        # One client for every pass: the limits and the bound on requests in flight hold across them.
        target: Any = spec.endpoints or (ModelClient(self.provider, cfg.policy()) if self.executor is None
                                         and spec.executor == "local" else self.provider)
        gate = MemoryGate(spec.live_tokens) if spec.live_tokens else None

        def waiting(n: int) -> None:
            self.console.print(f"waiting for {n} cases another process is sending (taken over if it stops)",
                               highlight=False)

        try:
            coord.start()
            run = self.executor or (self._batch_executor(store, run_id) if spec.batch
                                    else _executor(spec, self.tokenizer_name, self.provider))

            async def send(mine: Iterator[T]) -> int:
                cases = work.build(mine)
                return await run(gate.wrap(cases) if gate else cases, target,
                                 gate.wrap_sink(sink) if gate else sink, cfg,
                                 admit=gate.wrap_admit(ledger.admit) if gate else ledger.admit,
                                 keep=lambda case: coord.still_mine(case.case_id))

            with display.progress:
                sent = await send_claimed(todo, coord, send, key=work.key, group=work.group,
                                          stop=lambda: ledger.refused > 0, on_wait=waiting)
        finally:
            # also on Ctrl-C: the cases whose responses were stored are already committed
            coord.stopping.set()  # a producer thread waiting on other processes gives up
            finish_run(store, run_id, work.grid, coord)
        if ledger.refused:
            self.console.print(f"stopped at the spending cap of ${spec.max_cost:.2f} (spent ${ledger.spent:.4f}); "
                               "raise --max-cost and rerun to resume", highlight=False, soft_wrap=True)
        return SessionResult(run_id, resumed, sent, len(work.items) - len(todo), store.path,
                             gate.peak_tokens if gate else None)

    def _batch_executor(self, store: Store, run_id: str) -> Executor:
        """``execute_batch`` with the run's batches journalled in ``store`` (resumed, not resent)."""
        journal = StoreJournal(store.db, run_id)
        journal.close_answered(store.done_case_ids(run_id))  # collected before a kill, not yet marked
        return functools.partial(execute_batch, journal=journal, poll_s=self.spec.batch_poll,
                                 notify=lambda line: self.console.print(line, highlight=False, soft_wrap=True, markup=False),
                                 confirm_cancel=self.confirm_cancel)

    async def aclose(self) -> None:
        try:
            if self._judge_provider is not None:
                await self._judge_provider.aclose()
        finally:
            if self._provider is not None:
                await self._provider.aclose()


def variant_decodings(spec: Spec) -> dict[str, VariantDecoding]:
    """Family label → its prompt variant's decoding, for the labels that set one."""
    return {label: d for label, params in spec.families.items() if (d := decoding_of(params)) is not None}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _planned_count(store: Store, run_id: str, wanted: set[str]) -> int:
    """Cases the run plans, for counts shown against it: the spec's grid, or (for chosen
    cases, e.g. adaptive rounds) every case chosen so far — never fewer than before."""
    known = store.get_run(run_id)
    before = known.meta.planned_cases if known else None
    return max(len(wanted | store.case_ids(run_id)), before or 0)


def _executor(spec: Spec, tokenizer_name: str, provider: Provider) -> Executor:
    """The local asyncio runner, or Ray actors (same contract, same sink on this process)."""
    if spec.executor == "local":
        return execute
    from ctxprobe.runner.ray_executor import execute_ray

    return functools.partial(execute_ray, address=spec.ray_address or os.environ.get("RAY_ADDRESS"),
                             replicas=spec.ray_replicas, tokenizer=tokenizer_name, n_ctx=provider.context_window)
