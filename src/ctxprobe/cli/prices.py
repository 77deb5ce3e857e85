"""``ctxprobe prices``: the price table (parses, calls :mod:`ctxprobe.prices.listing`, prints)."""

from __future__ import annotations

import argparse
import json

from rich.console import Console

from ctxprobe.core.catalog import STALE_DAYS


def add_prices_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("prices", help="list the built-in (and your price file's) prices, tiers, windows, dates")
    p.add_argument("--prices", help="YAML price file extending the built-ins (default ~/.config/ctxprobe/prices.yaml)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON (full sources)")
    p.add_argument("--check", action="store_true",
                   help=f"exit 1 listing entries read over {STALE_DAYS} days ago, deprecated or retired")
    p.set_defaults(func=cmd_prices)


def cmd_prices(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.prices.listing import price_lines, price_problems, price_rows
    from ctxprobe.prices.table import load_prices

    rows = price_rows(load_prices(args.prices))
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=1))
    elif not args.check:
        for line in price_lines(rows):
            out.print(line, highlight=False, markup=False, soft_wrap=True)
    if not args.check:
        return 0
    problems = price_problems(rows)
    for line in problems:
        err.print(line, highlight=False, markup=False, soft_wrap=True)
    if problems:
        err.print(f"{len(problems)} price entries to check: read each on its provider's page, then give current "
                  "prices in a price file (--prices FILE)", highlight=False)
    return 1 if problems else 0
