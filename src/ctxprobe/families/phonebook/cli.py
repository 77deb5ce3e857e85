"""``ctxprobe phonebook`` (the phone book's own grid: books x needle counts x runs, one
depth) and the phone book's ``report`` flags (how its PNGs are drawn), declared as the
family's ``command``; plain ``run``/``plan`` grids of the phone book are refused here."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from ctxprobe.cli import BASE_URL_HELP, TOKENIZER_HELP, _add_cost_flags, _add_plots, _add_store
from ctxprobe.cli.common import DEFAULT_REPORT_DIR, FamilyCommand, spec_default
from ctxprobe.cli.sweeps import COST_KEYS, _ask, _exit_code, _print_plan
from ctxprobe.families.phonebook.task_grid import refuse_plain_phonebook
from ctxprobe.core.catalog import model_help
from ctxprobe.spec.merge import parse_params

#: The phone book's ``report`` flags, as its report hooks take them (``options``).
REPORT_FLAGS = ("trend_degree", "all_panels", "x_axis")


def _plot_flags(p: argparse.ArgumentParser, what: str = "") -> None:
    """How the phone-book PNGs are drawn: on ``phonebook``, and on ``report`` of phone-book runs."""
    p.add_argument("--trend-degree", type=int, metavar="D",
                   help=f"{what}degree of the plots' trend through the bin means (default 2, as the post's figures; "
                        "0: the metric fit, degree 3 as the post's metric script)")
    p.add_argument("--all-panels", action="store_true", default=None,
                   help=f"{what}plot every book size M (position) and every N (M-sweep), not only the largest")
    p.add_argument("--x-axis", choices=("entries", "tokens", "window"),
                   help=f"{what}x axis of the plots: entries (default: %% of the book, the post's position measure), "
                        "tokens (place in the prompt) or window (%% of the model's window, when known)")




def add_parser(sub: Any) -> None:
    d = spec_default
    p = sub.add_parser("phonebook", help="the phone-book experiment: M entries x N needles x runs, per-bin recall")
    p.add_argument("--model", default="local", help=model_help() + " (default %(default)s)")
    p.add_argument("--base-url", metavar="URL", help=BASE_URL_HELP)
    p.add_argument("--tokenizer", help=TOKENIZER_HELP)
    p.add_argument("--entries", help="book sizes M in entries, e.g. 1k,5k (k = 1,000 here)")
    p.add_argument("--lengths", help="or book sizes as token budgets, e.g. 2k,4k (k = 1,024 tokens)")
    p.add_argument("--needles", help="needle counts N, e.g. 10,50,100 (default)")
    p.add_argument("--runs", type=int, default=20, help="books per configuration (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the books and needles (default %(default)s)")
    p.add_argument("--max-tokens", type=int, help="output limit (default: room for the largest N)")
    p.add_argument("--temperature", type=float, default=0.0,
                   help="sampling temperature (default %(default)g, as published)")
    p.add_argument("--top-p", type=float,
                   help="nucleus top_p (default: 0.95 with --method post, as the original, except for anthropic: "
                        "models; not sent with --method ctxprobe)")
    p.add_argument("--method", choices=("post", "ctxprobe"), default="post",
                   help="post (default): the original experiment's prompt, bins and exact scoring; "
                        "ctxprobe: our bins, lenient scoring, and our own wording and shards as further variants")
    p.add_argument("--cot", action="store_true", help="append a chain-of-thought request to the question")
    p.add_argument("--variants", metavar="NAME[:KEY=VALUE+...],...",
                   help="prompt variants as a grid axis, each on the same seeded cases, compared case by case "
                        "with the first: e.g. start:instruction=before,end:instruction=after "
                        "(phone book, either method: repeat:repeat_instructions=true, user:book_in=user, shots:examples=2, "
                        "cot:cot=true, nosys:system_role=false; decoding: t0:temperature=0,t07:temperature=0.7+samples=5, "
                        "k samples per case)")
    p.add_argument("--post-normalise", action="store_true",
                   help="--method post: the original's extra reply normalisation used for some providers")
    p.add_argument("--param", action="append", metavar="phonebook.KEY=VALUE",
                   help="layout: book_in=system|user, system_role=false, repeat_instructions=true, examples=2 "
                        "(both methods); shards=4, system_prompt=..., question=... (--method ctxprobe)")
    p.add_argument("--concurrency", type=int, help=f"requests in flight (default {d('concurrency')})")
    p.add_argument("--timeout", type=float, help=f"seconds per request attempt (default {d('timeout')})")
    p.add_argument("--retries", type=int, help=f"retries on transient errors (default {d('retries')})")
    p.add_argument("--allow-beyond-window", action="store_true", default=None,
                   help="allow books beyond the model's window (for local/GGUF models: its trained context)")
    _add_cost_flags(p)
    p.add_argument("--plan", action="store_true",
                   help="print the grid, its tokens and its prices (what the same command then sends); send nothing")
    _plot_flags(p)
    _add_store(p)
    _add_plots(p, "")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_phonebook)




def cmd_phonebook(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.families.phonebook.report_plots import phonebook_report
    from ctxprobe.families.phonebook.report_xaxis import PlotOptions
    from ctxprobe.sweep.run import run_sweep
    from ctxprobe.families.phonebook.task_grid import phonebook_spec

    options = PlotOptions.from_flags(args.trend_degree, args.all_panels, args.x_axis)
    layout = parse_params(args.param or []).get("phonebook", {})
    if args.cot:
        layout["cot"] = True
    if args.post_normalise:
        layout["post_normalise"] = True
    extra = {k: getattr(args, k) for k in ("concurrency", "timeout", "retries", "allow_beyond_window", *COST_KEYS)
             if getattr(args, k) is not None}
    from ctxprobe.spec.names import canonical_model

    spec = phonebook_spec(
        model=canonical_model(args.model, args.base_url), entries=_split(args.entries),
        lengths=_split(args.lengths),
        needles=[int(n) for n in _split(args.needles) or ["10", "50", "100"]], runs=args.runs, seed=args.seed,
        tokenizer=args.tokenizer, layout=layout, max_tokens=args.max_tokens, temperature=args.temperature,
        top_p=args.top_p, method=args.method, variants=args.variants, **extra)
    if args.plan:
        return _print_plan(spec, out, err)
    result = run_sweep(spec, args.store, progress=not args.no_progress, console=err,
                       confirm_cancel=_ask(err) if spec.batch else None)
    err.print(f"run {result.run_id}: {result.sent} requests sent, {result.already_done} already stored")
    from ctxprobe.report.plots import can_plot

    skip = args.no_plots or (args.out is None and not can_plot())  # --out asks for PNGs: refused without [plot]
    phonebook_report([result.run_id], args.store, None if skip else Path(args.out or DEFAULT_REPORT_DIR), out,
                     options=options)
    if args.variants:
        from ctxprobe.report.variants import stored_variant_lines

        for line in stored_variant_lines(result.run_id, args.store):
            out.print(f"variants: {line}", highlight=False, markup=False)
    if skip and not args.no_plots:
        out.print("note: PNG plots skipped (pip install 'ctxprobe[plot]' for them; --no-plots hides this)",
                  highlight=False, markup=False)
    return _exit_code(result.run_id, args.store, err)


def _split(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _report_flags(p: argparse.ArgumentParser) -> tuple[str, ...]:
    _plot_flags(p, "phone-book runs: ")
    return REPORT_FLAGS


COMMAND = FamilyCommand(add_parser, report_flags=_report_flags, check_grid=refuse_plain_phonebook)
