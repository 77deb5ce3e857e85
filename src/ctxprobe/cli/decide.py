"""``ctxprobe decide``: parses, calls :func:`ctxprobe.decide.decide`, prints."""

from __future__ import annotations

import argparse
import json

from rich.console import Console

__all__ = ["add_decide_parser", "cmd_decide"]


def add_decide_parser(sub: argparse._SubParsersAction, default_store: str) -> None:
    p = sub.add_parser("decide", help="which model for which need: the cheapest run meeting the bar per band")
    p.add_argument("run_ids", nargs="+", metavar="RUN_ID", help="runs to choose among (`ctxprobe runs` lists them)")
    p.add_argument("--bars", help="per-family bars: niah=0.9,vartrack=nolima (default: each run's, 0.856)")
    p.add_argument("--threshold", type=float, help="the bar of every family --bars does not name")
    p.add_argument("--bands", help="needs, as upper ends: 100k,200k,1m (default: every tested length)")
    p.add_argument("--use", help="families a product needs together: its limit is the weakest one's")
    p.add_argument("--unit", choices=["tokens", "words", "chars", "entries"], default="tokens",
                   help="unit of the bands and limits (default tokens; words/chars: of the prompts' content)")
    p.add_argument("--prices", help="YAML price file (model: {input: USD/1M, output: USD/1M}); may price any "
                                    "model, sims and local ones included")
    p.add_argument("--json", action="store_true", help="machine-readable: {choices: [...], runs, limits, caveats}")
    p.add_argument("--html", metavar="PATH", help="also write an HTML page with the Pareto plot")
    p.add_argument("--store", default=default_store, metavar="PATH", help="SQLite results file")
    p.set_defaults(func=cmd_decide)


def _bands(text: str | None, unit: str) -> list[int] | None:
    if not text:
        return None
    from ctxprobe.spec import parse_lengths

    if unit == "tokens":
        return list(parse_lengths(text))
    from ctxprobe.decide.bands import parse_counts

    return parse_counts(text)


def cmd_decide(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.decide import decide
    from ctxprobe.spec.threshold import check_threshold, parse_bars

    decision = decide(args.run_ids, args.store, bands=_bands(args.bands, args.unit),
                      bars=parse_bars(args.bars) if args.bars else None,
                      threshold=check_threshold(args.threshold) if args.threshold is not None else None,
                      use=[u.strip() for u in args.use.split(",") if u.strip()] if args.use else None,
                      unit=args.unit, prices=args.prices)
    if args.html:
        from ctxprobe.decide.html import write_decision_html

        err.print(f"wrote {write_decision_html(decision, args.html)}")
    if args.json:
        print(json.dumps(decision.to_dict(), indent=2))
        return 0
    for line in decision.lines():
        out.print(line, highlight=False, markup=False)
    return 0
