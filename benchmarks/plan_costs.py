"""What two seed grids cost on one hosted model of each provider: on demand, with prompt
caching, and as a batch — planned from the grids' built prompts at the built-in list
prices (``ctxprobe.prices.table``), nothing sent.

    python benchmarks/plan_costs.py                 # prints the table
    python benchmarks/plan_costs.py --write docs/cost.md   # and rewrites its table block

Grids: the phone book's seed grid (M = 1K–5K entries, N = 10 / 50 / 100, 20 runs: the
three questions about one book share it) and a 5-depth niah grid at 8K–128K with 20
repetitions (the depths of one length and repetition share their filler). Prompts are
built and counted once with ``tiktoken:o200k_base`` for all three providers (Anthropic
and Gemini publish no tokenizer; their own counts differ by some percent), so the rows
compare prices on the same prompts.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ctxprobe.cases.builder import BuildSettings, CaseBuilder
from ctxprobe.cases.prefixes import plan_cached
from ctxprobe.core.case import Case
from ctxprobe.plan.caching import PRICING_MODES, cache_rules
from ctxprobe.plan.grid import PlannedCase, summarize
from ctxprobe.core.catalog import model_info
from ctxprobe.prices.table import price_for
from ctxprobe.spec import Spec, make_spec
from ctxprobe.sweep.pricing import periods_of
from ctxprobe.families.phonebook.task_grid import phonebook_spec

TOKENIZER = "tiktoken:o200k_base"
MODELS = ("openai:gpt-4.1", "anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-pro")
START, END = "<!-- cost-table:start: written by benchmarks/plan_costs.py; do not edit by hand -->", "<!-- cost-table:end -->"


def grids(model: str) -> dict[str, Spec]:
    return {
        "phone book, M 1K–5K, N 10/50/100, 20 runs": phonebook_spec(
            model=model, entries=["1k", "2k", "3k", "4k", "5k"], needles=[10, 50, 100], runs=20, tokenizer=TOKENIZER),
        "niah, 8K–128K, 5 depths, 20 reps": make_spec(
            {"model": model, "tokenizer": TOKENIZER, "lengths": "8k,16k,32k,64k,128k",
             "depths": "0,0.25,0.5,0.75,1", "reps": 20}),
    }


def memo_builder(spec: Spec, memo: dict[tuple[str, PlannedCase], Case]) -> tuple[Callable[[PlannedCase], Case], CaseBuilder]:
    """A builder whose cases are kept by (grid, planned case): every model reuses them."""
    builder = CaseBuilder(BuildSettings.of(spec, TOKENIZER))
    grid = repr(sorted(spec.families.items())) + repr(spec.lengths)

    def build(p: PlannedCase) -> Case:
        key = (grid, p)
        if key not in memo:
            memo[key] = builder.build(p)
        return memo[key]

    return build, builder


def table() -> list[str]:
    memo: dict[tuple[str, PlannedCase], Case] = {}
    rows = ["| grid | model | requests | prompt tokens | on demand | cached | batch | read / written |",
            "|---|---|---|---|---|---|---|---|"]
    tokenizer = None
    for model in MODELS:
        price = price_for(model)
        assert price is not None, model
        rules = cache_rules(model)
        for name, spec in grids(model).items():
            t0 = time.perf_counter()
            build, builder = memo_builder(spec, memo)
            tokenizer = tokenizer or builder.families[next(iter(builder.families))][0].ctx.tokenizer  # type: ignore[attr-defined]
            totals = plan_cached(spec, rules, build, periods_of(builder.families), tokenizer.count,
                                 summarize(spec).max_output_tokens)
            info = model_info(model)
            costs = [totals.cost(info or price, mode, rules, model) for mode in PRICING_MODES]
            requests = len(spec.lengths) * len(spec.depths) * spec.reps * len(spec.families)
            shown = " | ".join(f"${c:,.2f}" if c is not None else "—" for c in costs)
            rows.append(f"| {name} | `{model}` | {requests:,} | {totals.prompt:,} | {shown} | "
                        f"{totals.read_share:.1%} / {totals.written / totals.prompt:.1%} |")
            print(f"{model} {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", metavar="MD", help="rewrite the table block of this markdown file")
    args = parser.parse_args()
    rows = table()
    from ctxprobe.prices.library import library_version

    block = "\n".join([START, f"Prices: {library_version()}'s (today's); prompts counted with `{TOKENIZER}`.", "",
                        *rows, END])
    print(block)
    if args.write:
        path = Path(args.write)
        text = path.read_text(encoding="utf-8")
        new, n = re.subn(re.escape(START) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)
        if n != 1:
            raise SystemExit(f"{path} has no table block ({START} … {END})")
        path.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
