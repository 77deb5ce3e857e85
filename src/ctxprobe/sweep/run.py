"""Running a sweep: spec → plan → cases → runner → store (with scores).

This is the library entry point the CLI calls (``ctxprobe.run_sweep``). It resolves the
tokenizer and model, checks the lengths before anything is sent, and resumes a run whose
identity (spec without transport settings, tokenizer, ctxprobe version) is already stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

from rich.console import Console

from ctxprobe._version import __version__
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import check_model_form
from ctxprobe.models.base import PermanentError, Provider, TransientError
from ctxprobe.plan.grid import PlannedCase, planned_cases, prefix_chain, summarize
from ctxprobe.cases.builder import INDEPENDENT, SHARED, BuildSettings, CaseBuilder, build_cases
from ctxprobe.cases.memory import IdsPolicy, slim_case
from ctxprobe.cases.identity import check_builder
from ctxprobe.cases.sizing import Sizes, beyond_trained_warning, case_sizes
from ctxprobe.spec import Spec
from ctxprobe.store import RunMeta, Store
from ctxprobe.cases.families import build_families
from ctxprobe.cases.fitting import fit_lengths, too_short_lines
from ctxprobe.sweep.display import Display, progress_label
from ctxprobe.cases.prefixes import mark_prefix_groups, prefix_counter
from ctxprobe.sweep.pricing import periods_of, price_plan, rules_for
from ctxprobe.sweep.session import Executor, SessionRun, SessionResult, SweepSession, Work, variant_decodings, warn
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.case import Cell, Case
from ctxprobe.core.family import Family
from ctxprobe.tokenizers import infer_tokenizer, is_approximate, resolve_tokenizer
from ctxprobe.tokenizers.base import Tokenizer

#: What a sweep returns (the session's result).
SweepResult = SessionResult
_Display = Display  # the progress bar's old name
__all__ = ["Executor", "SweepResult", "arun_sweep", "beyond_trained_warning", "check_lengths", "progress_label",
           "run_id_for", "run_sweep"]


def check_lengths(spec: Spec, provider: Provider, families: dict[str, tuple[Family, object]],
                  sizes: Sizes | None = None) -> None:
    """Refuse impossible lengths before anything is sent."""
    window = provider.context_window
    sizes = sizes if sizes is not None else case_sizes(spec, families)

    thinking = max(spec.reasoning_budgets or [0])  # reasoning tokens come on top of the answer's

    def output(label: str) -> int:
        # a family whose lengths already include the output (RULER's prompt + generation <= L)
        return (0 if families[label][0].length_includes_output else spec.decoding.max_tokens) + thinking

    (label, length), longest = max(sizes.items(), key=lambda kv: kv[1] + output(kv[0][0]))
    if window is not None and longest + output(label) > window and not spec.allow_beyond_window:
        what = f"length {longest:,}" if longest == length else f"{label} length {length:,} ({longest:,} tokens)"
        extra = f" + {output(label)} output tokens" if output(label) else " (prompt and output)"
        kind = "trained window" if window == provider.trained_context else "window"
        raise CtxprobeError(
            f"{what}{extra} exceeds {spec.model}'s {kind} of "
            f"{window:,} tokens; drop that length or pass --allow-beyond-window"  # as plan says it
        )
    # Building the shortest case proves the fixed prompt parts fit (LengthTooShort otherwise);
    # a family whose repetitions differ in what they need (the phone book's N) names the
    # repetitions to build (``check_reps``), so none of them fails after a run is stored.
    for name, (family, params) in families.items():
        lengths = spec.lengths_of(name)  # a family too short for some lengths runs at the others
        for rep in family.check_reps(params) if lengths else []:
            family.generate(Cell(name, min(lengths), spec.depths[0]), rep, seed=spec.seed, params=params)  # type: ignore[arg-type]  # params typed object




async def _endpoint_window(provider: Provider, console: Console) -> None:
    """Where neither genai-prices nor a price file gives the window, the one the model's own
    endpoint states (Gemini ``models.get``, Anthropic's Models API), before lengths are checked."""
    ask = getattr(provider, "advertised_window", None)
    if provider.context_window is not None or not callable(ask):
        return
    try:
        provider.context_window = await ask()
    except (CtxprobeError, PermanentError, TransientError) as exc:  # the run goes on, the window unknown
        warn(console, f"the model's endpoint did not state its window: {exc}")


async def _model_facts(provider: Provider, console: Console) -> tuple[dict[str, object] | None, list[str]]:
    """What the provider states of the model (Anthropic's Models API: capabilities and
    lifecycle), read once before anything is checked or sent: (the facts, stored with the
    run; warnings). A retired model is refused (CtxprobeError); an endpoint that answers
    nothing leaves ctxprobe's own table in force, said in a warning."""
    read = getattr(provider, "read_model_facts", None)
    if not callable(read):
        return None, []
    try:
        facts, notes = await read()
    except (PermanentError, TransientError) as exc:
        warn(console, f"the model's endpoint did not state its capabilities ({exc}): ctxprobe's own table is used")
        return None, []
    for line in notes:
        warn(console, line)
    return facts, list(notes)


def check_reasoning_budgets(spec: Spec, provider: Provider) -> None:
    """Refuse, before anything is sent, a reasoning budget the model cannot take (a model
    that cannot reason takes budget 0 only; Anthropic's thinking starts at 1,024 tokens)."""
    for budget in spec.reasoning_budgets or []:
        why = provider.reasoning_refusal(budget)
        if why:
            raise CtxprobeError(why)


def check_layouts(spec: Spec, provider: Provider) -> None:
    """Refuse, before anything is sent, a message layout the model's API is not sent in
    (``--layout tools`` to a provider that does not translate tool messages), naming the
    flag or the variant."""
    from ctxprobe.core.variant import LAYOUT_PARAM

    asked: dict[str, str] = {"--layout": spec.layout.messages}
    for label, params in spec.families.items():
        changes = params.get(LAYOUT_PARAM) if isinstance(params, dict) else None
        if isinstance(changes, dict) and "messages" in changes:
            asked[f"variant {label}"] = str(changes["messages"])
    for where, messages in asked.items():
        why = provider.layout_refusal(messages)
        if why:
            raise CtxprobeError(f"{where}: {why}")


def check_decoding_variants(spec: Spec, provider: Provider) -> None:
    """Refuse, before anything is sent, the sweep's own ``--temperature`` (when not 0, with
    its ``--top-p``) or a prompt variant's decoding that the model would not be sent as asked (e.g.
    Anthropic: never both temperature and top_p; Claude Opus 4.7: none; a reasoning model:
    none), naming the flag or the variant."""
    thinking = any(b > 0 for b in spec.reasoning_budgets or [])
    own = spec.decoding
    # the sweep's own temperature, when one was asked for (a top_p alone may be a method's
    # default, e.g. the phone-book post's 0.95, and goes unsent where the model takes none)
    if own.temperature != 0:
        why = provider.sampling_refusal(own.temperature, own.top_p, thinking)
        if why:
            raise CtxprobeError(f"--temperature/--top-p: {why}")
    for label, decoding in variant_decodings(spec).items():
        if decoding.temperature is None and decoding.top_p is None:
            continue  # samples only: the sweep's decoding, checked above
        why = provider.sampling_refusal(*decoding.over(spec.decoding.temperature, spec.decoding.top_p), thinking)
        if why:
            raise CtxprobeError(f"variant {label}: {why}")


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
              executor: Executor | None = None, confirm_cancel: Callable[[str], bool] | None = None,
              announce: bool = True) -> SweepResult:
    """Run (or resume) a sweep and store every response as it arrives.

    ``planned`` replaces the spec's full grid with chosen (cell, repetition) pairs — e.g.
    extra repetitions of a few cells — while the run identity stays the spec's, so they
    land in the same run and resume like any other case. ``confirm_cancel``: with
    ``spec.batch``, asked once on Ctrl-C whether to cancel the provider's batches.
    ``announce``: say the inferred tokenizer and an approximate one's warning (False: a
    later round of the same sweep, ``run --adaptive``'s, that has said them already)."""
    return asyncio.run(arun_sweep(spec, store_path, progress=progress, console=console, planned=planned,
                                  executor=executor, confirm_cancel=confirm_cancel, announce=announce))


async def arun_sweep(spec: Spec, store_path: str | Path = "ctxprobe.sqlite", *, progress: bool = True,
                     console: Console | None = None, planned: list[PlannedCase] | None = None,
                     executor: Executor | None = None,
                     confirm_cancel: Callable[[str], bool] | None = None, announce: bool = True) -> SweepResult:
    console = console or Console(stderr=True)
    check_model_form(spec.model)
    tokenizer_name = spec.tokenizer or infer_tokenizer(spec.model)
    tokenizer = resolve_tokenizer(tokenizer_name, model=spec.model)

    ctx = BuildContext(tokenizer=tokenizer, haystack=spec.haystack, layout=spec.layout)
    families = build_families(spec, ctx)
    spec = fit_lengths(spec, families)  # a family too short for a length runs at the others (said below)
    sizes = case_sizes(spec, families)  # tokens per (family, length), built where lengths are not tokens
    needed = max(sizes.values()) + spec.decoding.max_tokens + max(spec.reasoning_budgets or [0])
    # An in-process model's runtime window grows to fit the sweep only when asked to.
    from ctxprobe.embedded.xllama import DEFAULT_N_CTX

    session = SweepSession(spec, tokenizer_name, tokenizer, families, console=console, progress=progress,
                           executor=executor, confirm_cancel=confirm_cancel)
    provider = session.resolve(n_ctx=max(needed, DEFAULT_N_CTX) if spec.allow_beyond_window else None)
    try:
        check_layouts(spec, provider)  # before the model is asked anything
        facts, notes = await _model_facts(provider, console)  # the provider's word on the model, read once
        check_reasoning_budgets(spec, provider)
        check_decoding_variants(spec, provider)
        await session.preflight()
        await _endpoint_window(provider, console)
        axis_note = getattr(provider, "reasoning_axis_note", None)  # how the budget axis is sent (adaptive-only Claude)
        decoding_note = getattr(provider, "decoding_note", None)  # decoding not settable (Claude, 2026-10-21)
        said = decoding_note() if callable(decoding_note) else None
        if said:
            console.print(said, highlight=False, markup=False)
        note = axis_note() if spec.reasoning_budgets and callable(axis_note) else None
        if note:
            warn(console, note)
        kept = [n for n in (*notes, said, note) if n]
        if kept or facts:
            if session.checked is None:  # a hosted API has no probe: the notes alone are kept
                from ctxprobe.core.runmeta import Preflight

                session.checked = Preflight()
            session.checked.warnings.extend(kept)  # stored with the preflight: the report says them too
            if facts:
                session.checked.endpoint["model_facts"] = facts
            if said:
                session.checked.endpoint["sampling"] = "provider default; not settable"
        check_lengths(spec, provider, families, sizes)
        beyond = beyond_trained_warning(spec, provider, tokenizer, sizes, families)
        if beyond:
            warn(console, beyond)
        session.open_ledger()
        store = Store(store_path)
        try:
            await session.open_judge([label for label, (family, params) in families.items()
                                      if family.uses_judge(params)])
            # said once everything is known to work, so a bad input stays a one-line error
            if announce and not spec.tokenizer:
                console.print(f"tokenizer: {tokenizer_name} (inferred from the model; name another with --tokenizer)",
                              highlight=False)
            if announce and is_approximate(tokenizer):
                warn(console, tokenizer.warning or "approximate token counts")
            if planned is None:  # the whole grid: what it can show, before anything is sent
                from ctxprobe.analysis.resolving import grid_power

                for line in grid_power(spec):
                    console.print(line, highlight=False, markup=False)
            for line in too_short_lines(spec) if announce else ():  # nothing silently skipped (said once)
                console.print(line, highlight=False, markup=False)
            builder = _KeptBuilder(BuildSettings.of(spec, tokenizer_name), families, session.ids)
            return await session.run(store, _record(spec, tokenizer_name, tokenizer, provider, sizes, builder),
                                     _work(spec, session, families, planned, builder))
        finally:
            store.close()
    finally:
        await session.aclose()


class _KeptBuilder(CaseBuilder):
    """The sweep's builder: the cases the price plan builds (the first prefix group of
    each length) are kept, slimmed, and handed to the run when it sends them — built once."""

    def __init__(self, settings: BuildSettings, families: dict[str, tuple[Family, object]], ids: IdsPolicy) -> None:
        super().__init__(settings, families)
        self._ids = ids
        self._kept: dict[PlannedCase, Case] = {}

    def keep(self, p: PlannedCase) -> Case:
        case = self._kept.get(p)
        if case is None:
            case = self._kept[p] = slim_case(super().build(p), self._ids)
        return case

    def build(self, p: PlannedCase) -> Case:
        case = self._kept.pop(p, None)
        return case if case is not None else super().build(p)


def _record(spec: Spec, tokenizer_name: str, tokenizer: Tokenizer, provider: Provider, sizes: Sizes,
            builder: _KeptBuilder) -> SessionRun:
    priced = price_plan(spec, tokenizer=tokenizer, tokenizer_name=tokenizer_name, builder=builder, build=builder.keep)
    meta = RunMeta(
        chat_template_hash=tokenizer.chat_template_hash,
        trained_context=provider.trained_context or tokenizer.trained_context,
        context_window=provider.context_window,
        plan=summarize(spec, sizes=sizes).__dict__,
        prefix_sharing=SHARED if spec.share_prefix else INDEPENDENT,
        # the plan's three prices, for the report's planned vs billed
        planned_cost=priced.to_dict() if priced.totals is not None else None,
    )
    return SessionRun(run_id_for(spec, tokenizer_name, tokenizer), model=spec.model, tokenizer=tokenizer_name,
                     family=",".join(spec.families), spec=spec.model_dump(), meta=meta)


def _work(spec: Spec, session: SweepSession, families: dict[str, tuple[Family, object]],
          planned: list[PlannedCase] | None, builder: CaseBuilder) -> Work[PlannedCase]:
    """The spec's grid (or the chosen cases), built lazily — on spec.build_workers
    processes when asked — and slimmed to what the provider needs."""
    plan = list(planned) if planned is not None else list(planned_cases(spec))
    grid = {p.case_id for p in planned_cases(spec)} | {p.case_id for p in plan}
    policy = session.ids
    # prompt caching: each case learns where it shares its prefix with its group
    hinted = spec.cache_prompt != "off" and rules_for(spec).mechanism != "none"
    periods = periods_of(families)
    count = prefix_counter(session.tokenizer_name, session.tokenizer)

    def cases(mine: Iterator[PlannedCase]) -> Iterator[Case]:
        # Runs in the runner's producer thread: it shares nothing mutable with the sink,
        # which stores each case itself (on the event-loop thread, with its response).
        # Lengths not in tokens (phone books sized in entries) are only checked once built.
        built = build_cases(spec, mine, spec.build_workers, tokenizer=session.tokenizer_name, builder=builder,
                            ids=policy)
        if hinted:
            built = mark_prefix_groups(built, periods, count, explicit=spec.cache_prompt == "explicit")
        for case in built:
            yield session.checked_case(case)

    units = {label: "entries" for label, params in spec.families.items() if (params or {}).get("unit") == "entries"}
    return Work(plan, grid, key=lambda p: p.case_id, build=cases, group=lambda p: prefix_chain(p.cell, p.rep),
                counted=grid if planned is None else {p.case_id for p in plan}, units=units,
                # a resume whose cases would now be built differently is refused (cases/identity.py)
                verify=lambda store, run_id, resumed: check_builder(store, run_id, builder.build,
                                                                    {p.case_id for p in plan}, resumed=resumed))
