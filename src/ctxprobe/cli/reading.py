"""Commands that read stored runs: report, runs, export, failures, compare, check."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from rich.console import Console

from ctxprobe.errors import CtxprobeError

from ctxprobe.cli.common import DEFAULT_REPORT_DIR


def print_run_report(run_id: str, store: str, out: Console, *, out_dir: str | None, plots: bool,
                     details: bool = False) -> None:
    """The report ``run`` prints after a sweep: the library's terminal report (the answer;
    ``details``: every table and note)."""
    from ctxprobe.report.load import load_report
    from ctxprobe.report.terminal import print_report

    print_report(load_report(run_id, store), out, plots=plots, out_dir=out_dir, details=details)


def cmd_report(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.spec.threshold import parse_bars

    bars = parse_bars(args.bars) if args.bars else None
    options = {k: getattr(args, k) for k in args.family_flags if getattr(args, k) is not None}
    if options and args.json:
        flags = ", ".join("--" + k.replace("_", "-") for k in options)
        raise CtxprobeError(f"{flags} shape the PNGs of the terminal and HTML reports; --json draws none of them: "
                            "drop them, or report without it")
    if args.html:
        from ctxprobe.report.html.page import build_html_report

        path = build_html_report(args.run_ids, args.store, args.html, threshold=args.threshold, bars=bars,
                                 png_dir=None if args.no_plots else Path(args.out or DEFAULT_REPORT_DIR),
                                 failures=args.failures, scorer=args.scorer, family_options=options)
        err.print(f"wrote {path}")
        return 0
    if args.json:
        from ctxprobe.report.load import report_json

        print(json.dumps(report_json(args.run_ids, args.store, args.threshold, args.scorer, bars), indent=2))
        return 0
    from ctxprobe.report.terminal import print_runs

    print_runs(args.run_ids, args.store, out, plots=not args.no_plots, out_dir=args.out, threshold=args.threshold,
               scorer=args.scorer, bars=bars, family_options=options, details=args.details)
    return 0


def cmd_compare(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.analysis.bootstrap import ThresholdRule
    from ctxprobe.report.compare_table import compare_table, fitting
    from ctxprobe.report.compare_runs import compare_runs

    cmp = compare_runs(args.run_a, args.run_b, args.store, store_b=args.store_b, alpha=args.alpha,
                       rule=ThresholdRule.parse(args.threshold_rule) if args.threshold_rule else None)
    for fam in cmp.families:
        out.print(fitting(out, [compare_table(fam, cmp.run_a, cmp.run_b),  # full ids, as the verdict names them
                                compare_table(fam, cmp.run_a, cmp.run_b, compact=True)]))
    out.print(cmp.verdict(), highlight=False)
    return 0


def cmd_check(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.report.compare_runs import check, plan_check

    if args.plan:
        lines = plan_check(args.run_id, lengths=args.lengths, depths=args.depths, family=args.family, reps=args.reps,
                           drop=args.drop, max_drop=args.max_drop, alpha=args.alpha)
        for line in lines:
            out.print(line, highlight=False, markup=False)  # wrapped at the terminal's width, between words
        return 0
    slice_flags = [f"--{k}" for k in ("lengths", "depths", "family", "reps", "drop") if getattr(args, k) is not None]
    if slice_flags:
        raise CtxprobeError(f"{', '.join(slice_flags)} size a slice for --plan: add --plan, or drop them")
    if not args.run_id or not args.baseline:
        raise CtxprobeError("check needs RUN_ID and --baseline BASELINE_RUN_ID (or --plan to size a slice)")
    result = check(args.run_id, args.baseline, max_drop=args.max_drop, alpha=args.alpha, store_path=args.store,
                   baseline_store=args.baseline_store, allow_inconclusive=args.allow_inconclusive)
    for line in result.lines():
        out.print(line, highlight=False, markup=False)  # wrapped at the terminal's width, between words
    return result.exit_code


def cmd_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.report.runs import runs_json, runs_table
    from ctxprobe.store import open_existing

    with open_existing(args.store) as store:
        runs = store.list_runs()
    if args.json:
        print(json.dumps(runs_json(runs), indent=2))
        return 0
    out.print(runs_table(runs, out.width))
    return 0


def cmd_export(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.report import export as ex
    from ctxprobe.report.export import export_jsonl

    if getattr(args, "lm_eval", None):
        from ctxprobe.cli.harnesses import cmd_export_lm_eval

        return cmd_export_lm_eval(args, out, err)
    if args.parquet:
        if not args.output:
            raise CtxprobeError("--parquet needs -o FILE.parquet")
        n = ex.write_parquet(args.run_id, args.store, args.output)
        err.print(f"wrote {n} cases to {args.output}")
        return 0
    if args.ruler:
        if not args.output:
            raise CtxprobeError("--ruler needs -o DIR: it writes DIR/<length>/<task>.jsonl for RULER's evaluate.py")
        n = ex.write_ruler_predictions(args.run_id, args.store, args.output)
        err.print(f"wrote {n} cases to {args.output}/<length>/<task>.jsonl (RULER's evaluate.py --data_dir "
                  f"{args.output}/<length>)")
        return 0
    writer = ex.write_csv if args.csv else export_jsonl
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as fh:
                n = writer(args.run_id, args.store, fh)
        except OSError as e:
            raise CtxprobeError(f"cannot write {args.output}: {e.strerror}") from None
        err.print(f"wrote {n} cases to {args.output}")
    else:
        writer(args.run_id, args.store, sys.stdout)
    return 0


def cmd_failures(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.report.failures import render_failures

    render_failures(args.run_id, args.store, out, outcome=args.outcome, n=args.n)  # "no failures in run X" when none
    return 0
