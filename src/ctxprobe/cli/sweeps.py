"""Commands that send requests: run, plan, phonebook, serve-sim, serve-local (parse, call the library, print)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from ctxprobe.errors import CtxprobeError

from ctxprobe.cli.common import check_family_grids
from ctxprobe.cli.reading import print_run_report
from ctxprobe.spec.merge import find_preset


#: Spec keys of spending, rates, batches and reasoning budgets: flags run, plan and phonebook share.
COST_KEYS = ("reasoning_budgets", "rpm", "tpm", "max_cost", "prices", "cache_prompt", "pricing", "batch", "batch_poll")


def _spec_from_args(args: argparse.Namespace) -> Any:
    """The spec of the file and flags (``spec.merge_spec``: flags over the file)."""
    from ctxprobe.spec import merge_spec

    options = _preset_options(args, find_preset(args.preset)) if args.preset else None
    return merge_spec(args.spec, vars(args), family=args.family, preset=args.preset, preset_options=options,
                      params=args.param or [], distractors=args.distractors,
                      variants=getattr(args, "variants", None))


def _preset_options(args: argparse.Namespace, preset: Any) -> dict[str, str | None]:
    """The preset's options from its ``--NAME-KEY`` flags (``--ruler-docs`` → ``docs``)."""
    return {key: getattr(args, f"{preset.name}_{key}".replace("-", "_"), None) for key in preset.options}


def _run_pack(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.sweep.packs import run_pack

    grid = [f for f in ("spec", "preset", "lengths", "depths", "family", "reps", "seed", "param", "distractors", "haystack",
                        "instruction", "separator", "messages", "turn_tokens", "evidence_role")
            if getattr(args, f) not in (None, [], False)]
    if grid:
        raise CtxprobeError(f"--cases re-sends a pack's exact prompts: drop --{grid[0].replace('_', '-')}")
    if not args.model:
        raise CtxprobeError("--cases needs --model: the model to send the pack's prompts to")
    from ctxprobe.spec.names import parse_model

    transport = {k: getattr(args, k, None) for k in ("concurrency", "timeout", "retries", "rpm", "tpm", "max_cost",
                                                     "prices", "judge", "judge_labels", "force_judge",
                                                     "allow_beyond_window", "batch", "batch_poll",
                                                     "cache_prompt", "pricing")}
    r = run_pack(args.cases, parse_model(args.model, args.base_url), args.store, tokenizer=args.tokenizer,
                 force=args.force, allow_edited=args.allow_edited_pack, progress=not args.no_progress,
                 console=err, **transport)
    print_run_report(r.run_id, args.store, out, out_dir=args.out, plots=not args.no_plots, details=args.details)
    return _exit_code(r.run_id, args.store, err)


def _exit_code(run_id: str, store: str, err: Console) -> int:
    """0, or 3 when the run is incomplete: harness failures, or cases never sent (README: exit codes)."""
    from ctxprobe.report.load import run_completeness

    health = run_completeness(run_id, store)
    if health.incomplete:
        err.print(health.line(), highlight=False, soft_wrap=True)
        return 3
    return 0


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.sweep.run import run_sweep

    if args.cases:
        return _run_pack(args, out, err)
    spec = _spec_from_args(args)
    check_family_grids(spec, "run")
    from ctxprobe.models import check_model_name

    for model in (spec.model, spec.judge):  # a mistyped model is the first line, before the preset's notice
        if model:
            check_model_name(model)
    if args.preset:
        preset = find_preset(args.preset)
        line = preset.notice(_preset_options(args, preset))
        if line:
            err.print(line, highlight=False)
    if args.adaptive:
        from ctxprobe.sweep.adaptive import adaptive_sweep
        from ctxprobe.spec import parse_length

        res = adaptive_sweep(spec, args.store, confidence=args.confidence,
                             token_budget=parse_length(args.token_budget) if args.token_budget else None,
                             bisect=args.bisect, progress=not args.no_progress, console=err)
        for line in res.lines():
            err.print(line, highlight=False)
        run_id = res.run_id
    else:
        result = run_sweep(spec, args.store, progress=not args.no_progress, console=err,
                           confirm_cancel=_ask(err) if spec.batch else None)
        verb = "resumed" if result.resumed else "created"
        err.print(f"run {result.run_id} {verb}: {result.sent} requests sent, {result.already_done} already stored "
                  f"in {result.store_path}")
        run_id = result.run_id
    print_run_report(run_id, args.store, out, out_dir=args.out, plots=not args.no_plots, details=args.details)
    return _exit_code(run_id, args.store, err)


def _ask(err: Console) -> Any:
    """A yes/no question on the terminal (None when stdin is not one: nothing is asked)."""
    import sys

    if not sys.stdin.isatty():
        return None

    def ask(question: str) -> bool:
        err.print(f"{question} [y/N] ", end="", highlight=False, markup=False)
        try:
            return sys.stdin.readline().strip().lower() in ("y", "yes")
        except (KeyboardInterrupt, EOFError):
            return False

    return ask


def cmd_plan(args: argparse.Namespace, out: Console, err: Console) -> int:
    spec = _spec_from_args(args)
    check_family_grids(spec, "plan")
    return _print_plan(spec, out, err, args)


def _print_plan(spec: Any, out: Console, err: Console, args: argparse.Namespace | None = None) -> int:
    """The plan's report (one library call), printed: what ``plan`` and ``phonebook --plan`` show."""
    from ctxprobe.sweep.plan_report import AdaptivePlan, plan_report

    adaptive = None
    if args is not None and args.adaptive:
        from ctxprobe.spec import parse_length

        adaptive = AdaptivePlan(confidence=args.confidence, bisect=args.bisect,
                                token_budget=parse_length(args.token_budget) if args.token_budget else None)
    report = plan_report(spec, adaptive=adaptive,
                         progress=lambda line: err.print(line, highlight=False))
    if args is not None and getattr(args, "json", False):
        import json

        print(json.dumps(report.to_dict(), indent=1))
        return 0
    for line in report.lines():
        out.print(line, highlight=False, markup=False)
    for line in report.warnings:
        err.print(f"warning: {line}", style="yellow", highlight=False, markup=False)
    return 0


def cmd_serve_sim(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.core import registry
    from ctxprobe.core.loader import resolve
    from ctxprobe.models import resolve_provider
    from ctxprobe.tokenizers import resolve_tokenizer

    from ctxprobe.spec.names import parse_model

    model = parse_model(args.model)
    if model.provider != "sim":
        from ctxprobe.core.profiles.local import sim_forms

        raise CtxprobeError(f"serve-sim serves simulated models only: --model sim:{sim_forms()}")
    tokenizer = resolve_tokenizer(args.tokenizer)
    provider = resolve_provider(model, tokenizer)

    def ready(url: str) -> None:
        err.print(f"serving {model} (tokenizer {args.tokenizer}) at {url} — Ctrl-C stops", highlight=False)

    sim = registry.get("providers", "sim")  # its server is the simulator's, named on its entry
    serve_forever = resolve(sim.meta["serve"], what="the sim server")
    serve_forever(provider, host=args.host, port=args.port, tokenizer=tokenizer, truncate_to=args.truncate_to,
                  model_id=args.model_id, on_ready=ready)
    return 0


def cmd_serve_local(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.providers.llamacpp.serve import LocalServer, serve_local_forever

    def ready(server: LocalServer) -> None:
        trained = f", trained window {server.trained_context}" if server.trained_context else ""
        err.print(f"serving {args.model} with llama.cpp's server at {server.base_url} ({server.slots} slot(s) of "
                  f"{server.ctx} tokens{trained}) — Ctrl-C stops", highlight=False)
        out.print(f"ctxprobe run --model '{server.model_spec}' --tokenizer endpoint ...", highlight=False, soft_wrap=True)

    serve_local_forever(args.model, port=args.port, slots=args.slots, ctx=args.ctx, on_ready=ready)
    return 0
