"""Running a sweep: spec → plan → cases → runner → store (with scores).

This is the library entry point the CLI calls (``ctxprobe.run_sweep``). It resolves the
tokenizer and model, checks the lengths before anything is sent, and resumes a run whose
identity (spec without transport settings, tokenizer, ctxprobe version) is already stored.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ctxprobe._version import __version__
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import check_model_form, ids_policy, resolve_provider
from ctxprobe.models.base import Provider
from ctxprobe.sweep.preflight import PreflightReport, run_preflight
from ctxprobe.plan.grid import PlannedCase, planned_cases, summarize
from ctxprobe.plan.prices import load_prices, price_for
from ctxprobe.runner import Attempted, RunnerConfig, execute
from ctxprobe.cases.memory import MemoryGate, slim_case
from ctxprobe.cases.builder import INDEPENDENT, SHARED, BuildSettings, CaseBuilder, build_cases
from ctxprobe.cases.identity import check_builder
from ctxprobe.runner.budget import Ledger
from ctxprobe.scores.record import record_response
from ctxprobe.cases.sizing import Sizes, case_sizes
from ctxprobe.spec import Spec
from ctxprobe.store import Store
from ctxprobe.store.claims import Coordinator
from ctxprobe.sweep.claiming import finish_run, send_claimed
from ctxprobe.cases.families import build_families
from ctxprobe.tasks import BuildContext, Cell
from ctxprobe.tasks.base import Family
from ctxprobe.tasks.case import Case
from ctxprobe.tokenizers import infer_tokenizer, is_approximate, resolve_tokenizer
from ctxprobe.tokenizers.base import Tokenizer


#: ``runner.execute.execute`` or anything with its signature (``execute_ray``).
Executor = Callable[..., Awaitable[int]]


@dataclass(frozen=True)
class SweepResult:
    run_id: str
    resumed: bool
    sent: int
    already_done: int
    store_path: Path
    peak_live_tokens: int | None = None  # with spec.live_tokens: the most tokens held in built cases


async def _calibrated_judge(spec: Spec, tokenizer: Tokenizer, families: dict[str, tuple[Family, object]],
                            meta: dict[str, object], console: Console) -> object | None:
    """The judge for ``match: judge`` families, calibrated before any case is sent; its
    calibration report is stored with the run, and a judge that fails it is refused unless
    ``force_judge``."""
    wants = [label for label, (_, params) in families.items() if getattr(params, "match", None) == "judge"]
    if not wants:
        return None
    if not spec.judge:
        raise CtxprobeError(f"family {wants[0]} grades with a judge (match: judge): name one with --judge MODEL")
    from ctxprobe.scores.judge import JudgeScorer, acalibrate, load_labelled_set, resolve_judge, synthetic_labelled_set

    judge = resolve_judge(spec.judge, tokenizer)
    items = load_labelled_set(spec.judge_labels) if spec.judge_labels else synthetic_labelled_set()
    report = await acalibrate(judge, items)
    meta["judge_calibration"] = report.to_dict()
    console.print(f"judge {spec.judge}: {report.summary()}", highlight=False)
    return JudgeScorer(judge, report, force=spec.force_judge)


def check_lengths(spec: Spec, provider: Provider, families: dict[str, tuple[Family, object]],
                  sizes: Sizes | None = None) -> None:
    """Refuse impossible lengths before anything is sent."""
    window = provider.context_window
    sizes = sizes if sizes is not None else case_sizes(spec, families)

    def output(label: str) -> int:
        # a family whose lengths already include the output (RULER's prompt + generation <= L)
        return 0 if getattr(families[label][0], "length_includes_output", False) else spec.decoding.max_tokens

    (label, length), longest = max(sizes.items(), key=lambda kv: kv[1] + output(kv[0][0]))
    if window is not None and longest + output(label) > window and not spec.allow_beyond_window:
        what = f"length {longest}" if longest == length else f"{label} length {length} ({longest:,} tokens)"
        extra = f" + {output(label)} output tokens" if output(label) else " (prompt and output)"
        kind = "trained window" if window == getattr(provider, "trained_context", None) else "window"
        raise CtxprobeError(
            f"{what}{extra} exceeds {spec.model}'s {kind} of "
            f"{window} tokens; drop that length or pass --allow-beyond-window"
        )
    # Building the shortest case proves the fixed prompt parts fit (LengthTooShort otherwise);
    # a family whose repetitions differ in what they need (the phone book's N) names the
    # repetitions to build (``check_reps``), so none of them fails after a run is stored.
    for name, (family, params) in families.items():
        check_reps = getattr(family, "check_reps", None)
        for rep in check_reps(params) if check_reps is not None else [0]:
            family.generate(Cell(name, min(spec.lengths), spec.depths[0]), rep, seed=spec.seed, params=params)  # type: ignore[arg-type]


def progress_label(case: Case, outcome: str, unit: str = "tokens") -> str:
    """``niah          8K d=0.25 correct``: fixed width, so the bar does not jump sideways."""
    n = case.cell.length
    if unit == "entries":  # a phone book: its size, not a token length
        where = f"{n:>7,} entries"
    else:
        length = f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n)
        where = f"{length:>5} d={case.cell.depth:<4g}"
    family = case.cell.family if len(case.cell.family) <= 10 else case.cell.family[:9] + "…"
    return f"{family:<10} {where:<15} {outcome:<16}"


def beyond_trained_warning(spec: Spec, provider: Provider, tokenizer: Tokenizer, sizes: Sizes,
                           families: dict[str, tuple[Family, object]] | None = None) -> str | None:
    """A warning (said before anything is sent) when some cases pass the model's trained
    context: those lengths measure extrapolation, not the window the model was built for."""
    trained = getattr(provider, "trained_context", None) or tokenizer.trained_context
    if not trained:
        return None

    def output(label: str) -> int:  # as in check_lengths: some families' lengths include the output
        family = (families or {}).get(label)
        return 0 if family and getattr(family[0], "length_includes_output", False) else spec.decoding.max_tokens

    beyond = sorted({length for (label, length), tokens in sizes.items() if tokens + output(label) > trained})
    if not beyond:
        return None
    shown = ", ".join(f"{n:,}" for n in beyond)
    return (f"length(s) {shown} (+ {spec.decoding.max_tokens} output tokens) pass {spec.model}'s trained context of "
            f"{trained:,} tokens: results there measure the model beyond its training")


class _Display:
    """A progress bar with ETA and a running accuracy, on stderr."""

    def __init__(self, total: int, done: int, enabled: bool, console: Console,
                 units: dict[str, str] | None = None) -> None:
        self.units = units or {}  # family label -> "entries" for books sized in entries
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[acc]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=console, disable=not enabled, transient=False,
        )
        self.task = self.progress.add_task("sweep", total=total, completed=done, acc="")
        self.scored = 0
        self.correct = 0.0

    def update(self, case: Case, score: float | None, outcome: str, spent: float | None = None) -> None:
        if score is not None:
            self.scored += 1
            self.correct += score
        acc = f"acc {self.correct / self.scored:.2f}" if self.scored else ""
        if spent is not None:
            acc += f" ${spent:.4f}"
        label = progress_label(case, outcome, self.units.get(case.cell.family, "tokens"))
        self.progress.update(self.task, advance=1, acc=acc, description=label)


def tokenizer_fingerprint(tokenizer_name: str, tokenizer: Tokenizer) -> str | None:
    """What stands in for a server tokenizer's URL in the run identity: the ids of a fixed
    templated chat (``chat_template_hash`` of an endpoint tokenizer); None elsewhere."""
    return tokenizer.chat_template_hash if tokenizer_name.startswith("endpoint:") else None


def run_id_for(spec: Spec, tokenizer_name: str | None = None, tokenizer: Tokenizer | None = None) -> str:
    """The id of the run ``spec`` makes (resolving its tokenizer when not given)."""
    tokenizer_name = tokenizer_name or spec.tokenizer or infer_tokenizer(spec.model)
    if tokenizer is None and tokenizer_name.startswith("endpoint:"):
        tokenizer = resolve_tokenizer(tokenizer_name, model=spec.model)
    fingerprint = tokenizer_fingerprint(tokenizer_name, tokenizer) if tokenizer is not None else None
    return spec.run_id(tokenizer=tokenizer_name, version=__version__, tokenizer_fingerprint=fingerprint)


def run_sweep(spec: Spec, store_path: str | Path = "ctxprobe.sqlite", *, progress: bool = True,
              console: Console | None = None, planned: list[PlannedCase] | None = None,
              executor: Executor | None = None) -> SweepResult:
    """Run (or resume) a sweep and store every response as it arrives.

    ``planned`` replaces the spec's full grid with chosen (cell, repetition) pairs — e.g.
    extra repetitions of a few cells — while the run identity stays the spec's, so they
    land in the same run and resume like any other case."""
    return asyncio.run(arun_sweep(spec, store_path, progress=progress, console=console, planned=planned,
                                  executor=executor))


async def arun_sweep(spec: Spec, store_path: str | Path = "ctxprobe.sqlite", *, progress: bool = True,
                     console: Console | None = None, planned: list[PlannedCase] | None = None,
                     executor: Executor | None = None) -> SweepResult:
    console = console or Console(stderr=True)
    check_model_form(spec.model)
    tokenizer_name = spec.tokenizer or infer_tokenizer(spec.model)
    tokenizer = resolve_tokenizer(tokenizer_name, model=spec.model)

    ctx = BuildContext(tokenizer=tokenizer, haystack=spec.haystack, layout=spec.layout)
    families = build_families(spec, ctx)
    sizes = case_sizes(spec, families)  # tokens per (family, length), built where lengths are not tokens
    needed = max(sizes.values()) + spec.decoding.max_tokens
    # An in-process model's runtime window grows to fit the sweep only when asked to.
    from ctxprobe.models.llamacpp import DEFAULT_N_CTX

    n_ctx = max(needed, DEFAULT_N_CTX) if spec.allow_beyond_window else None
    provider = resolve_provider(spec.model, tokenizer, n_ctx=n_ctx)
    try:
        checked = await run_preflight(provider, tokenizer, spec)
        for warning in checked.warnings if checked else ():
            console.print(Text.assemble(("warning: ", "bold yellow"), warning))
        check_lengths(spec, provider, families, sizes)
        beyond = beyond_trained_warning(spec, provider, tokenizer, sizes, families)
        if beyond:
            console.print(Text.assemble(("warning: ", "bold yellow"), beyond))
        store = Store(store_path)
        # said once everything is known to work, so a bad input stays a one-line error
        if not spec.tokenizer:
            console.print(f"tokenizer: {tokenizer_name} (inferred from the model; name another with --tokenizer)",
                          highlight=False)
        if is_approximate(tokenizer):
            console.print(Text.assemble(("warning: ", "bold yellow"),
                                        getattr(tokenizer, "warning", "approximate token counts")))
        try:
            return await _run(spec, store, tokenizer_name, tokenizer, families, provider, progress, console,
                              planned, checked, executor, sizes)
        finally:
            store.close()
    finally:
        await provider.aclose()


async def _run(spec: Spec, store: Store, tokenizer_name: str, tokenizer: Tokenizer,
               families: dict[str, tuple[Family, object]], provider: Provider, progress: bool,
               console: Console, planned: list[PlannedCase] | None,
               checked: PreflightReport | None, executor: Executor | None, sizes: Sizes) -> SweepResult:
    run_id = run_id_for(spec, tokenizer_name, tokenizer)
    meta = {
        "chat_template_hash": tokenizer.chat_template_hash,
        "trained_context": getattr(provider, "trained_context", None) or tokenizer.trained_context,
        "context_window": provider.context_window,
        "plan": summarize(spec, sizes=sizes).__dict__,
        "prefix_sharing": SHARED if spec.share_prefix else INDEPENDENT,
    }
    if checked is not None:
        meta["preflight"] = checked.to_dict()
    judge = await _calibrated_judge(spec, tokenizer, families, meta, console)
    # preflight saw the server count tokens exactly as we do: any shortfall is truncation
    exact_counts = checked is not None and checked.exact_counts
    ledger = Ledger(spec.model, price_for(spec.model, load_prices(spec.prices)), max_cost=spec.max_cost,
                    spent=0.0, max_tokens=spec.decoding.max_tokens)
    plan = list(planned) if planned is not None else list(planned_cases(spec))
    grid = {p.case_id for p in planned_cases(spec)} | {p.case_id for p in plan}
    resumed = store.ensure_run(run_id, model=spec.model, tokenizer=tokenizer_name, family=",".join(spec.families),
                               version=__version__, spec=spec.model_dump(), meta=meta)
    # issue 23: a resume whose cases would now be built differently is refused (cases/identity.py)
    check_builder(store, run_id, CaseBuilder(BuildSettings.of(spec, tokenizer_name), families).build,
                  {p.case_id for p in plan}, resumed=resumed)
    ledger.spent = store.spent(run_id)
    if resumed:  # the serving path and the judge as of this session
        store.update_run(run_id, meta={k: meta[k] for k in ("preflight", "judge_calibration") if k in meta})
    n_planned = _planned_count(store, run_id, grid if planned is None else {p.case_id for p in plan})
    store.update_run(run_id, status="running", meta={"planned_cases": n_planned, "transport": {
        k: getattr(spec, k) for k in ("concurrency", "timeout", "retries", "rpm", "tpm", "max_cost")}})
    done = store.done_case_ids(run_id)
    todo = [p for p in plan if p.case_id not in done]
    # Other processes may run this spec on this store: every case is claimed before it is
    # built and sent; cases another live process holds are waited for, or taken over.
    coord = Coordinator(store.path, run_id)  # its session starts inside the try below

    def waiting(n: int) -> None:
        console.print(f"waiting for {n} cases another process is sending (taken over if it stops)", highlight=False)

    # Cases are built lazily (on spec.build_workers processes when asked), slimmed to what
    # the provider needs, and optionally held under a token budget until stored.
    builder = CaseBuilder(BuildSettings.of(spec, tokenizer_name), families)
    policy = ids_policy(provider)

    def cases(mine: Iterator[PlannedCase]) -> Iterator[Case]:
        # Runs in the runner's producer thread: it shares nothing mutable with the sink,
        # which stores each case itself (on the event-loop thread, with its response).
        for case in build_cases(spec, mine, spec.build_workers, tokenizer=tokenizer_name, builder=builder,
                                ids=policy):
            window = provider.context_window
            out_tokens = case.max_tokens or spec.decoding.max_tokens
            if window and case.token_count + out_tokens > window and not spec.allow_beyond_window:
                # lengths not in tokens (e.g. phone books sized in entries) are only known once built
                raise CtxprobeError(
                    f"case {case.case_id} has {case.token_count} tokens + {out_tokens} output, beyond "
                    f"{spec.model}'s window of {window}; use smaller lengths or pass --allow-beyond-window")
            yield slim_case(case, policy)

    units = {label: "entries" for label, params in spec.families.items() if (params or {}).get("unit") == "entries"}
    display = _Display(len(plan), len(plan) - len(todo), progress, console, units)

    async def sink(item: Attempted) -> None:
        store.save_case(run_id, item.case)
        r = item.result
        judged = None
        if judge is not None and r is not None and r.text is not None and item.case.meta.get("match") == "judge":
            judged = await judge.ascore(item.case, r.text)
        observe = getattr(tokenizer, "observe", None)
        if observe is not None and r is not None and r.prompt_tokens:
            observe(item.case.messages, r.prompt_tokens)  # an approximate counter learns from the server
        cost = ledger.settle(item.case, r.prompt_tokens if r else 0, r.completion_tokens if r else 0)
        score, scored = record_response(store, run_id, families[item.case.cell.family][0], item, judged=judged,
                                        cost_usd=cost, exact_counts=exact_counts)
        coord.settle(item.case.case_id)
        display.update(item.case, score, scored.outcome, ledger.spent if ledger.price and ledger.price.input else None)

    cfg = RunnerConfig(concurrency=spec.concurrency, timeout=spec.timeout, retries=spec.retries,
                       max_tokens=spec.decoding.max_tokens, temperature=spec.decoding.temperature,
                       seed=spec.decoding.seed, top_p=spec.decoding.top_p, requests_per_minute=spec.rpm,
                       tokens_per_minute=spec.tpm)
    gate = MemoryGate(spec.live_tokens) if spec.live_tokens else None
    try:
        coord.start()
        run = executor or _executor(spec, tokenizer_name, provider)

        async def send(mine: Iterator[PlannedCase]) -> int:
            return await run(gate.wrap(cases(mine)) if gate else cases(mine), spec.endpoints or provider,
                             gate.wrap_sink(sink) if gate else sink, cfg,
                             admit=gate.wrap_admit(ledger.admit) if gate else ledger.admit,
                             keep=lambda case: coord.still_mine(case.case_id))

        with display.progress:
            sent = await send_claimed(todo, coord, send, key=lambda p: p.case_id,
                                      group=lambda p: (p.cell.family, p.cell.length, p.rep),
                                      stop=lambda: ledger.refused > 0, on_wait=waiting)
    finally:
        # also on Ctrl-C: the cases whose responses were stored are already committed
        coord.stopping.set()  # a producer thread waiting on other processes gives up
        finish_run(store, run_id, grid, coord)
    if ledger.refused:
        console.print(f"stopped at the spending cap of ${spec.max_cost:.2f} (spent ${ledger.spent:.4f}); "
                      "raise --max-cost and rerun to resume")
    return SweepResult(run_id, resumed, sent, len(plan) - len(todo), store.path,
                       gate.peak_tokens if gate else None)


def _planned_count(store: Store, run_id: str, wanted: set[str]) -> int:
    """Cases the run plans, for counts shown against it: the spec's grid, or (for chosen
    cases, e.g. adaptive rounds) every case chosen so far — never fewer than before."""
    known = store.get_run(run_id)
    before = known.meta.get("planned_cases") if known else None
    return max(len(wanted | store.case_ids(run_id)), before if isinstance(before, int) else 0)


def _executor(spec: Spec, tokenizer_name: str, provider: Provider) -> Executor:
    """The local asyncio runner, or Ray actors (same contract, same sink on this process)."""
    if spec.executor == "local":
        return execute
    from ctxprobe.runner.ray_executor import execute_ray

    return functools.partial(execute_ray, address=spec.ray_address or os.environ.get("RAY_ADDRESS"),
                             replicas=spec.ray_replicas, tokenizer=tokenizer_name, n_ctx=provider.context_window)
