"""Commands that read stored runs: report, runs, export, failures, compare, check."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ctxprobe.errors import CtxprobeError

from ctxprobe.cli.common import DEFAULT_REPORT_DIR


def _print_report(run_id: str, store: str, out: Console, *, json_out: bool, out_dir: str | None, plots: bool,
                  threshold: float | None, scorer: str = "strict", bars: str | None = None) -> int:
    from ctxprobe.report.load import load_report, write_plots
    from ctxprobe.spec.threshold import parse_bars

    report = load_report(run_id, store, threshold, scorer, parse_bars(bars) if bars else None)
    if json_out:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    from ctxprobe.report.table import render_outcomes_table, render_profile_table

    from ctxprobe.report.format import fmt_tokens
    from ctxprobe.tasks.layout import stored_layout_line

    run = report.run
    out.print(Text.assemble((f"run {run.run_id}", "bold"), f" · model {run.model} · tokenizer {run.tokenizer} · "
                            f"{run.n_final}/{run.n_planned} planned cases answered · {run.status} · "
                            f"scorer {report.scorer}"
                            + (" (RULER string match, re-scored)" if report.scorer == "ruler" else "")
                            + " · lengths in tokens"
                            + (f" · filler {run.meta['prefix_sharing']} across depths"
                               if run.meta.get("prefix_sharing") else "")
                            + (f" · {layout}" if (layout := stored_layout_line(run.spec)) else "")), highlight=False)
    for line in report.incomplete:
        out.print(Text(line, style="bold magenta"))
    if len(report.profiles) > 1:
        _print_profile_summary(report, out)
    for prof in report.profiles:
        render_profile_table(prof, out)
        interval = report.intervals.get(prof.family)
        if interval is not None:
            out.print(f"{prof.family}: {interval.line()}", highlight=False)
            out.print(f"  {_reliable(interval)}", highlight=False)
            clears = ", ".join(f"{fmt_tokens(k)}: {v:.2f}" for k, v in sorted(interval.p_clear.items())
                               if k not in interval.not_measured)
            if clears:
                out.print(f"  P(accuracy ≥ {report.threshold:g}) by length (Bayesian, Jeffreys prior per cell): "
                          f"{clears}", highlight=False)
        render_outcomes_table(prof, out)
        if (floor := report.floors.get(prof.family)) is not None:
            from ctxprobe.report.floor_table import render_floor

            render_floor(floor, out)
    if report.budgets:
        from ctxprobe.report.budget_table import render_budget_table

        render_budget_table(report.budgets, out)
    if report.ruler is not None:
        from ctxprobe.report.ruler_table import render_ruler_headline

        strict = {p.family: p.effective_length for p in report.profiles} if report.scorer == "strict" else None
        render_ruler_headline(report.ruler, out, strict, report.threshold)
    for note in report.notes:
        out.print(Text.assemble(("note: ", "bold"), note))
    if plots and report.profiles:
        import importlib.util

        if out_dir is None and importlib.util.find_spec("matplotlib") is None:
            # a plain install has no plotting: the tables above are the report; --out asks for PNGs
            out.print("note: PNG plots skipped (pip install 'ctxprobe[plot]' for them; --no-plots hides this)",
                      highlight=False, markup=False)
            return 0
        directory = Path(out_dir or DEFAULT_REPORT_DIR) / run.run_id
        for path in write_plots(report, directory):
            out.print(f"wrote {path}")
    return 0


def _reliable(iv: Any) -> str:
    """What a user may plan around: only lengths that clear the bar with the stated confidence."""
    from ctxprobe.report.format import fmt_tokens

    pct = f"{iv.confidence * 100:g}%"
    if iv.reliable_up_to is not None:
        more = "" if iv.exact else f"; it may reach {iv.label(iv.hi)} — add repetitions to tell"
        return f"reliable up to {fmt_tokens(iv.reliable_up_to)} tokens ({pct} confidence{more})"
    if iv.hi is None:
        return f"fails the bar already at the shortest length ({pct} confidence)"
    return (f"not shown reliable at any tested length: too few cases to clear the bar with {pct} confidence "
            f"(it may reach {iv.label(iv.hi)}); add repetitions")


def _print_profile_summary(report: Any, out: Console) -> None:
    """One row per family: the profile at a glance, before the per-family detail."""
    from rich.table import Table

    from ctxprobe.report.format import fmt_tokens

    from ctxprobe.report.floor_table import summary_cell

    columns = ["family", "observed effective length", "95% interval", "accuracy at shortest", "accuracy at longest"]
    table = Table(*columns, *(["above floor"] if report.floors else []),
                  title=f"profile (bar: mean ≥ {report.threshold:g}; scorer {report.scorer}; lengths in tokens)")
    table.columns[0].no_wrap = True  # a family's name is never cut (the floor column narrows the rest)
    for prof in report.profiles:
        iv = report.intervals.get(prof.family)
        measured = [s for s in prof.lengths if s.mean is not None]
        first = f"{measured[0].mean:.2f} at {fmt_tokens(measured[0].length)}" if measured else "–"
        last = f"{measured[-1].mean:.2f} at {fmt_tokens(measured[-1].length)}" if measured else "–"
        eff = fmt_tokens(prof.effective_length) if prof.effective_length else "below the shortest"
        interval = iv.interval_text() if iv is not None else "–"
        table.add_row(prof.family, eff, interval, first, last,
                      *([summary_cell(report.floors.get(prof.family))] if report.floors else []))
    out.print(table)


def cmd_report(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.html:
        from ctxprobe.report.html import build_html_report

        from ctxprobe.spec.threshold import parse_bars

        path = build_html_report(args.run_ids, args.store, args.html, threshold=args.threshold,
                                 bars=parse_bars(args.bars) if args.bars else None,
                                 png_dir=None if args.no_plots else Path(args.out or DEFAULT_REPORT_DIR),
                                 failures=args.failures, scorer=args.scorer)
        err.print(f"wrote {path}")
        return 0
    if not args.json and _all_phonebook(args.run_ids, args.store):
        from ctxprobe.report.phonebook_plots import phonebook_report

        phonebook_report(args.run_ids, args.store, None if args.no_plots else Path(args.out or DEFAULT_REPORT_DIR),
                         out)
        return 0
    if args.json and len(args.run_ids) > 1:
        print(json.dumps([_report_dict(r, args.store, args.threshold, args.bars) for r in args.run_ids], indent=2))
        return 0
    for run_id in args.run_ids:
        _print_report(run_id, args.store, out, json_out=args.json, out_dir=args.out, plots=not args.no_plots,
                      threshold=args.threshold, scorer=args.scorer, bars=args.bars)
    return 0


def _all_phonebook(run_ids: list[str], store: str) -> bool:
    from ctxprobe.store import open_existing

    with open_existing(store) as st:
        return all(st.require_run(r).family == "phonebook" for r in run_ids)


def _report_dict(run_id: str, store: str, threshold: float | None, bars: str | None = None) -> dict[str, Any]:
    from ctxprobe.report.load import load_report
    from ctxprobe.spec.threshold import parse_bars

    return load_report(run_id, store, threshold, bars=parse_bars(bars) if bars else None).to_dict()


def cmd_compare(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.analysis.bootstrap import ThresholdRule
    from ctxprobe.report.compare_table import compare_table, fitting
    from ctxprobe.report.compare_runs import compare_runs

    cmp = compare_runs(args.run_a, args.run_b, args.store, store_b=args.store_b, alpha=args.alpha,
                       rule=ThresholdRule.parse(args.threshold_rule) if args.threshold_rule else None)
    for fam in cmp.families:
        out.print(fitting(out, [compare_table(fam, args.run_a, args.run_b),
                                compare_table(fam, args.run_a, args.run_b, compact=True)]))
    out.print(cmp.verdict(), highlight=False)
    return 0


def cmd_check(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.report.compare_runs import check

    result = check(args.run_id, args.baseline, max_drop=args.max_drop, alpha=args.alpha, store_path=args.store,
                   baseline_store=args.baseline_store)
    for line in result.lines():
        out.print(line, highlight=False)
    return result.exit_code


def cmd_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.report.runs import run_families, runs_table
    from ctxprobe.store import open_existing

    with open_existing(args.store) as store:
        runs = store.list_runs()
    if args.json:
        print(json.dumps([{"run_id": r.run_id, "created_at": r.created_at, "model": r.model, "tokenizer": r.tokenizer,
                           "family": ",".join(fams), "status": r.status, "cases": r.n_cases,
                           "responses": r.n_responses, "planned": r.n_planned, "answered": r.n_final,
                           "lengths": r.spec.get("lengths"), "depths": r.spec.get("depths"),
                           "reps": r.spec.get("reps"), **({"batch": r.batch} if r.batch else {}),
                           **({"baseline": baseline} if baseline else {})}
                          for r in runs for fams, baseline in [run_families(r)]], indent=2))
        return 0
    out.print(runs_table(runs))
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

    shown = render_failures(args.run_id, args.store, out, outcome=args.outcome, n=args.n)
    if not shown:
        err.print("no failures" + (f" with outcome {args.outcome}" if args.outcome else ""))
    return 0
