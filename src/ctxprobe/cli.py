"""The ``ctxprobe`` command line: parses, calls the library, prints. Nothing else."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ctxprobe.errors import CtxprobeError

DEFAULT_STORE = "ctxprobe.sqlite"
DEFAULT_REPORT_DIR = "ctxprobe-report"

EXAMPLES = """examples:
  ctxprobe run --model local --lengths 1k,2k,4k,8k,12k --depths 0,0.5,1 --reps 1 --distractors 3
  ctxprobe run spec.yaml --reps 5          # flags override the file
  ctxprobe runs
  ctxprobe report RUN_ID                   # table + PNG heatmap and curve
  ctxprobe report RUN_ID --json            # machine-readable, for CI
  ctxprobe export RUN_ID --jsonl -o cases.jsonl
  ctxprobe serve-sim --model sim:blind-middle --port 8000
"""


def _add_store(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=DEFAULT_STORE, metavar="PATH",
                   help=f"SQLite results file (default ./{DEFAULT_STORE})")


def _add_spec_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", nargs="?", help="YAML spec file (flags override its keys)")
    p.add_argument("--model", help="local | llamacpp:/path.gguf | openai-compat:NAME@URL | sim:perfect|echo|blind-middle|decay")
    p.add_argument("--tokenizer", help="local | gguf:/path.gguf | hf:/dir (default: inferred from the model)")
    p.add_argument("--family", help="task families, comma list (default niah)")
    p.add_argument("--preset", help="a named set of families: ruler (RULER's 13 task designs; the QA tasks need "
                                      "--ruler-docs and --ruler-qa-squad/--ruler-qa-hotpot)")
    p.add_argument("--ruler-docs", help="ruler preset: a folder of documents for the QA tasks")
    p.add_argument("--ruler-qa-squad", help="ruler preset: SQuAD-style QA JSONL (see the documents family)")
    p.add_argument("--ruler-qa-hotpot", help="ruler preset: HotpotQA-style QA JSONL")
    p.add_argument("--param", action="append", metavar="FAMILY.KEY=VALUE",
                   help="a family parameter, e.g. --param niah.distractors=3 (repeatable)")
    p.add_argument("--lengths", help="comma list of prompt lengths in model tokens: 1k,4k,8k (k = 1024) or 4000")
    p.add_argument("--depths", help="comma list of evidence depths in [0,1] (default 0,0.25,0.5,0.75,1)")
    p.add_argument("--reps", type=int, help="repetitions per cell (default 3)")
    p.add_argument("--seed", type=int, help="sweep seed (default 0)")
    p.add_argument("--distractors", type=int, help="niah: same-form needles with other keys (default 0)")
    p.add_argument("--haystack", help="directory of your own .txt/.md filler (default: generated prose)")
    p.add_argument("--max-tokens", type=int, help="output token limit (default 48)")
    p.add_argument("--temperature", type=float, help="sampling temperature (default 0: greedy)")
    p.add_argument("--concurrency", type=int, help="requests in flight (default 4)")
    p.add_argument("--timeout", type=float, help="seconds per request attempt (default 600)")
    p.add_argument("--retries", type=int, help="retries on transient errors (default 4)")
    p.add_argument("--threshold", type=float, help="accuracy bar for effective length (default 0.856)")
    p.add_argument("--rpm", type=float, help="requests per minute limit")
    p.add_argument("--tpm", type=float, help="tokens per minute limit (prompt + max output)")
    p.add_argument("--max-cost", type=float, help="stop before spending more than this many USD")
    p.add_argument("--prices", help="YAML price file (model: {input: USD/1M, output: USD/1M}) extending the built-ins")
    p.add_argument("--judge", help="judge model for open-ended answers (documents with match=judge), e.g. "
                                     "openai:gpt-4o-mini; calibrated before use")
    p.add_argument("--judge-labels", help="labelled JSONL to calibrate the judge on (default: built-in synthetic set)")
    p.add_argument("--force-judge", action="store_true", default=None, help="use the judge even if calibration fails")
    p.add_argument("--allow-beyond-window", action="store_true", default=None,
                   help="allow lengths beyond the model's context window")


def _spec_from_args(args: argparse.Namespace) -> Any:
    from ctxprobe.spec import load_spec, make_spec

    over: dict[str, Any] = {}
    for key in ("model", "tokenizer", "lengths", "depths", "reps", "seed", "haystack", "concurrency",
                "timeout", "retries", "threshold", "allow_beyond_window", "rpm", "tpm", "max_cost", "prices",
                "judge", "judge_labels", "force_judge"):
        value = getattr(args, key)
        if value is not None:
            over[key] = value
    decoding = {k: v for k, v in (("max_tokens", args.max_tokens), ("temperature", args.temperature)) if v is not None}
    base: dict[str, Any] = load_spec(args.spec).model_dump() if args.spec else {}
    families: dict[str, dict[str, Any]] = dict(base.get("families") or {})
    if args.preset:
        families = _preset(args)
    if args.family:
        names = [f.strip() for f in args.family.split(",") if f.strip()]
        families = {n: families.get(n, {}) for n in names}
    params = _parse_params(args.param or [])
    if args.distractors is not None:
        params.setdefault("niah", {})["distractors"] = args.distractors
    for name, values in params.items():
        if families and name not in families:
            raise CtxprobeError(f"--param {name}.…: family '{name}' is not in this sweep (families: {', '.join(families)})")
        families.setdefault(name, {}).update(values)
    if families:
        over["families"] = families
    if args.spec:
        data = {**base, **over}
        data["decoding"] = {**data["decoding"], **decoding}
        return make_spec(data)
    if decoding:
        over["decoding"] = decoding
    return make_spec(over)


def _preset(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    if args.preset != "ruler":
        raise CtxprobeError(f"unknown preset '{args.preset}': available: ruler")
    from ctxprobe.tasks.ruler import ruler_families

    tasks = ruler_families(docs=args.ruler_docs, qa_squad=args.ruler_qa_squad, qa_hotpot=args.ruler_qa_hotpot)
    return {name: {"family": t["family"], **t["params"]} for name, t in tasks.items() if t["family"]}


def _run_pack(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.packs import run_pack

    grid = [f for f in ("spec", "preset", "lengths", "depths", "family", "reps", "seed", "param", "distractors", "haystack")
            if getattr(args, f) not in (None, [], False)]
    if grid:
        raise CtxprobeError(f"--cases re-sends a pack's exact prompts: drop --{grid[0].replace('_', '-')}")
    if not args.model:
        raise CtxprobeError("--cases needs --model: the model to send the pack's prompts to")
    r = run_pack(args.cases, args.model, args.store, tokenizer=args.tokenizer, concurrency=args.concurrency or 4,
                 timeout=args.timeout or 600.0, retries=args.retries or 4, force=args.force)
    return _print_report(r.run_id, args.store, out, json_out=False, out_dir=args.out, plots=not args.no_plots,
                         threshold=None)


def _parse_params(items: list[str]) -> dict[str, dict[str, Any]]:
    """``niah.distractors=3`` → ``{"niah": {"distractors": 3}}`` (values parsed as YAML scalars)."""
    import yaml

    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        family, dot, name = key.partition(".")
        if not sep or not dot or not family or not name:
            raise CtxprobeError(f"bad --param {item!r}: use FAMILY.KEY=VALUE, e.g. niah.distractors=3")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        out.setdefault(family.strip(), {})[name.strip()] = value
    return out


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.sweep import run_sweep

    if args.cases:
        return _run_pack(args, out, err)
    spec = _spec_from_args(args)
    if args.adaptive:
        from ctxprobe.adaptive import adaptive_sweep
        from ctxprobe.spec import parse_length

        res = adaptive_sweep(spec, args.store, confidence=args.confidence,
                             token_budget=parse_length(args.token_budget) if args.token_budget else None,
                             bisect=args.bisect, progress=not args.no_progress, console=err)
        for line in res.lines():
            err.print(line, highlight=False)
        run_id = res.run_id
    else:
        result = run_sweep(spec, args.store, progress=not args.no_progress, console=err)
        verb = "resumed" if result.resumed else "created"
        err.print(f"run {result.run_id} {verb}: {result.sent} requests sent, {result.already_done} already stored "
                  f"in {result.store_path}")
        run_id = result.run_id
    return _print_report(run_id, args.store, out, json_out=False, out_dir=args.out, plots=not args.no_plots,
                         threshold=None)


def _print_report(run_id: str, store: str, out: Console, *, json_out: bool, out_dir: str | None, plots: bool,
                  threshold: float | None) -> int:
    from ctxprobe.results import load_report, write_plots

    report = load_report(run_id, store, threshold)
    if json_out:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    from ctxprobe.report.table import render_outcomes_table, render_profile_table

    run = report.run
    out.print(f"[bold]run {run.run_id}[/] · model {run.model} · tokenizer {run.tokenizer} · "
              f"{run.n_responses}/{run.n_cases} responses · {run.status}")
    for prof in report.profiles:
        render_profile_table(prof, out)
        interval = report.intervals.get(prof.family)
        if interval is not None:
            clears = ", ".join(f"{k // 1024 if k % 1024 == 0 else k}{'K' if k % 1024 == 0 else ''}: {v:.2f}"
                               for k, v in sorted(interval.p_clear.items()))
            out.print(f"{prof.family}: {interval.line()} — bootstrap over cases; P(mean ≥ bar) by length: {clears}",
                      highlight=False)
            if prof.cells and min(c.n for c in prof.cells) < 5:
                out.print(f"{prof.family}: fewer than 5 cases in some cells — the bootstrap interval understates the "
                          "uncertainty there; the Wilson intervals above do not", highlight=False)
        render_outcomes_table(prof, out)
    for note in report.notes:
        out.print(Text.assemble(("note: ", "bold"), note))
    if plots and report.profiles:
        directory = Path(out_dir or DEFAULT_REPORT_DIR) / run.run_id
        for path in write_plots(report, directory):
            out.print(f"wrote {path}")
    return 0


def cmd_report(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.html:
        from ctxprobe.report.html import build_html_report

        path = build_html_report(args.run_ids, args.store, args.html, threshold=args.threshold,
                                 png_dir=None if args.no_plots else Path(args.out or DEFAULT_REPORT_DIR),
                                 failures=args.failures)
        err.print(f"wrote {path}")
        return 0
    if not args.json and _all_phonebook(args.run_ids, args.store):
        from ctxprobe.report.phonebook_plots import phonebook_report

        phonebook_report(args.run_ids, args.store, None if args.no_plots else Path(args.out or DEFAULT_REPORT_DIR),
                         out)
        return 0
    if args.json and len(args.run_ids) > 1:
        print(json.dumps([_report_dict(r, args.store, args.threshold) for r in args.run_ids], indent=2))
        return 0
    for run_id in args.run_ids:
        _print_report(run_id, args.store, out, json_out=args.json, out_dir=args.out, plots=not args.no_plots,
                      threshold=args.threshold)
    return 0


def _all_phonebook(run_ids: list[str], store: str) -> bool:
    from ctxprobe.results import open_existing

    with open_existing(store) as st:
        return all(st.require_run(r).family == "phonebook" for r in run_ids)


def _report_dict(run_id: str, store: str, threshold: float | None) -> dict[str, Any]:
    from ctxprobe.results import load_report

    return load_report(run_id, store, threshold).to_dict()


def cmd_phonebook(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.report.phonebook_plots import phonebook_report
    from ctxprobe.sweep import run_sweep
    from ctxprobe.tasks.phonebook_grid import phonebook_spec

    layout = _parse_params(args.param or []).get("phonebook", {})
    extra = {k: getattr(args, k) for k in ("concurrency", "timeout", "retries") if getattr(args, k) is not None}
    spec = phonebook_spec(
        model=args.model, entries=_split(args.entries), lengths=_split(args.lengths),
        needles=[int(n) for n in _split(args.needles) or ["10", "50", "100"]], runs=args.runs, seed=args.seed,
        tokenizer=args.tokenizer, layout=layout, max_tokens=args.max_tokens, **extra)
    result = run_sweep(spec, args.store, progress=not args.no_progress, console=err)
    err.print(f"run {result.run_id}: {result.sent} requests sent, {result.already_done} already stored")
    phonebook_report([result.run_id], args.store, None if args.no_plots else Path(args.out or DEFAULT_REPORT_DIR),
                     out)
    return 0


def _split(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def cmd_compare(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.table import Table

    from ctxprobe.analysis.bootstrap import ThresholdRule
    from ctxprobe.analysis.compare import compare_runs

    cmp = compare_runs(args.run_a, args.run_b, args.store, store_b=args.store_b, alpha=args.alpha,
                       rule=ThresholdRule.parse(args.threshold_rule) if args.threshold_rule else None)
    for fam in cmp.families:
        table = Table("cell", "pairs", "mean A", "mean B", "A only", "B only", "p", "p (Holm)", "",
                      title=f"{fam.family}: {args.run_a} (A) vs {args.run_b} (B), McNemar exact per cell")
        for c in [*fam.cells, fam.pooled]:
            table.add_row(c.label, str(c.n_pairs), f"{c.mean_a:.2f}", f"{c.mean_b:.2f}", str(c.a_only),
                          str(c.b_only), f"{c.p_value:.3g}", f"{c.p_adjusted:.3g}", "*" if c.significant else "")
        out.print(table)
    out.print(cmp.verdict(), highlight=False)
    return 0


def cmd_check(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.analysis.compare import check

    result = check(args.run_id, args.baseline, max_drop=args.max_drop, alpha=args.alpha, store_path=args.store,
                   baseline_store=args.baseline_store)
    for line in result.lines():
        out.print(line, highlight=False)
    return result.exit_code


def cmd_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.table import Table

    from ctxprobe.results import open_existing

    with open_existing(args.store) as store:
        runs = store.list_runs()
    if args.json:
        print(json.dumps([{"run_id": r.run_id, "created_at": r.created_at, "model": r.model, "tokenizer": r.tokenizer,
                           "family": r.family, "status": r.status, "cases": r.n_cases, "responses": r.n_responses,
                           "lengths": r.spec.get("lengths"), "depths": r.spec.get("depths"),
                           "reps": r.spec.get("reps")} for r in runs], indent=2))
        return 0
    table = Table("run", "created", "model", "family", "lengths", "responses", "status")
    for r in runs:
        table.add_row(r.run_id, r.created_at, r.model, r.family, ",".join(str(x) for x in r.spec.get("lengths", [])),
                      f"{r.n_responses}/{r.n_cases}", r.status)
    out.print(table)
    return 0


def cmd_export(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.report import export as ex
    from ctxprobe.results import export_jsonl

    if args.parquet:
        if not args.output:
            raise CtxprobeError("--parquet needs -o FILE.parquet")
        n = ex.write_parquet(args.run_id, args.store, args.output)
        err.print(f"wrote {n} cases to {args.output}")
        return 0
    writer = ex.write_csv if args.csv else ex.write_ruler_jsonl if args.ruler else export_jsonl
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


def cmd_plan(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.plan import summarize
    from ctxprobe.prices import load_prices, price_for

    spec = _spec_from_args(args)
    for line in summarize(spec, price_for(spec.model, load_prices(spec.prices))).lines():
        out.print(line)
    return 0


def cmd_serve_sim(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.models import resolve_provider
    from ctxprobe.models.sim_server import serve_forever
    from ctxprobe.tokenizers import resolve_tokenizer

    if not args.model.startswith("sim:"):
        raise CtxprobeError("serve-sim serves simulated models only: --model sim:perfect|echo|blind-middle|decay")
    tokenizer = resolve_tokenizer(args.tokenizer)
    provider = resolve_provider(args.model, tokenizer)
    err.print(f"serving {args.model} (tokenizer {args.tokenizer}) at http://{args.host}:{args.port}/v1 — Ctrl-C stops")
    serve_forever(provider, host=args.host, port=args.port, tokenizer=tokenizer, truncate_to=args.truncate_to)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxprobe", description="Measure a language model's effective context length.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run (or resume) a sweep, then print the report",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES)
    _add_spec_flags(p)
    _add_store(p)
    p.add_argument("--out", help=f"directory for PNG plots (default ./{DEFAULT_REPORT_DIR}/RUN_ID)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--cases", metavar="PACK", help="re-send an exported pack's exact prompts (export --jsonl)")
    p.add_argument("--force", action="store_true", help="--cases: run even if the tokenizer/template differs")
    p.add_argument("--adaptive", action="store_true",
                   help="coarse pass, then more repetitions only where the effective-length decision is unsure")
    p.add_argument("--confidence", type=float, default=0.95, help="adaptive: decision confidence (default 0.95)")
    p.add_argument("--token-budget", help="adaptive: cap on prompt tokens sent, e.g. 2m (default: the full grid's)")
    p.add_argument("--bisect", type=int, default=0, help="adaptive: bisect between grid lengths this many times")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("phonebook", help="the phone-book experiment: M entries x N needles x runs, per-bin recall")
    p.add_argument("--model", default="local")
    p.add_argument("--tokenizer")
    p.add_argument("--entries", help="book sizes M in entries, e.g. 1k,5k (k = 1,000 here)")
    p.add_argument("--lengths", help="or book sizes as token budgets, e.g. 2k,4k (k = 1,024 tokens)")
    p.add_argument("--needles", help="needle counts N, e.g. 10,50,100 (default)")
    p.add_argument("--runs", type=int, default=20, help="books per configuration (default 20)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-tokens", type=int, help="output limit (default: room for the largest N)")
    p.add_argument("--param", action="append", metavar="phonebook.KEY=VALUE",
                   help="layout: book_in=system|user, system_role=false, repeat_instructions=true, examples=2, "
                        "shards=4, system_prompt=..., question=...")
    p.add_argument("--concurrency", type=int)
    p.add_argument("--timeout", type=float)
    p.add_argument("--retries", type=int)
    _add_store(p)
    p.add_argument("--out", help=f"directory for PNG plots (default ./{DEFAULT_REPORT_DIR})")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_phonebook)

    p = sub.add_parser("compare", help="paired comparison of two runs on the same seeded cases")
    p.add_argument("run_a")
    p.add_argument("run_b")
    _add_store(p)
    p.add_argument("--store-b", help="store of RUN_B when it lives in another file")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate (Holm) (default 0.05)")
    p.add_argument("--threshold-rule", help="0.856 (absolute), relative or relative:0.85 (NoLiMa)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("check", help="regression gate: exit 1 when RUN is significantly worse than the baseline")
    p.add_argument("run_id")
    p.add_argument("--baseline", required=True, help="baseline run id (same seeded cases)")
    _add_store(p)
    p.add_argument("--baseline-store", help="store of the baseline when it lives in another file")
    p.add_argument("--max-drop", type=float, default=0.05, help="largest tolerated accuracy drop (default 0.05)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate (default 0.05)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("plan", help="print the grid size and token cost of a spec without sending anything")
    _add_spec_flags(p)
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("report", help="grid table with 95%% intervals, effective length, PNG plots, HTML")
    p.add_argument("run_ids", nargs="+", metavar="RUN_ID", help="run id(s) (a unique prefix is enough)")
    p.add_argument("--html", metavar="PATH", help="write one self-contained HTML report (several runs side by side)")
    p.add_argument("--failures", type=int, default=20, help="failures to sample into the HTML report (default 20)")
    _add_store(p)
    p.add_argument("--json", action="store_true", help="print the results as JSON (for CI pipelines)")
    p.add_argument("--threshold", type=float, help="accuracy bar (default: the run's, 0.856)")
    p.add_argument("--out", help=f"directory for PNG plots (default ./{DEFAULT_REPORT_DIR}/RUN_ID)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("runs", help="list stored runs")
    _add_store(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("export", help="every case of a run: messages, answer, token counts, depth, output, outcome")
    p.add_argument("run_id")
    _add_store(p)
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--jsonl", action="store_true",
                     help="JSON Lines, one case per line with its result; also an instance pack that "
                          "`ctxprobe run --cases FILE` re-sends byte for byte (the default)")
    fmt.add_argument("--csv", action="store_true", help="CSV, one row per case")
    fmt.add_argument("--parquet", action="store_true", help="Parquet, one row per case (needs -o and ctxprobe[export])")
    fmt.add_argument("--ruler", action="store_true", help="RULER-format JSONL, for other runners")
    p.add_argument("-o", "--output", help="file to write (default: stdout)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("failures", help="a sample of failed cases with the evidence highlighted")
    p.add_argument("run_id")
    _add_store(p)
    p.add_argument("--outcome", help="only this outcome, e.g. distractor, wrong, not_found, input_truncated")
    p.add_argument("--n", type=int, default=10, help="how many (default 10)")
    p.set_defaults(func=cmd_failures)

    p = sub.add_parser("serve-sim", help="serve a simulated model over a loopback OpenAI-compatible API")
    p.add_argument("--model", default="sim:perfect")
    p.add_argument("--tokenizer", default="local")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--truncate-to", type=int, default=None,
                   help="silently left-truncate prompts longer than N tokens (a fault to detect)")
    p.set_defaults(func=cmd_serve_sim)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Console()
    err = Console(stderr=True)
    try:
        return int(args.func(args, out, err) or 0)
    except CtxprobeError as e:
        err.print(Text.assemble(("error: ", "bold red"), str(e)), highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        err.print("interrupted: every response received so far is stored; rerun the same command to resume")
        return 130


if __name__ == "__main__":
    sys.exit(main())
