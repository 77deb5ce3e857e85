"""The ``import-*`` commands' parsers: runs made elsewhere (published sets, inspect_ai
logs, lm-eval samples) brought into a store."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from ctxprobe.cli.common import DEFAULT_STORE
from ctxprobe.cli.harnesses import cmd_import_inspect, cmd_import_lm_eval




def _add_store(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=DEFAULT_STORE, metavar="PATH", help="SQLite results file (default ./%(default)s)")


def add_import_parsers(sub: Any) -> None:
    from ctxprobe.sweep.published import set_names

    sets = set_names()  # the families' declared sets (no reader imported)
    p = sub.add_parser("import-published", help="turn a local copy of a published set (openai/mrcr, "
                       "openai/graphwalks, LongBench v2, LongMemEval, Oolong) into an instance pack for "
                       "`ctxprobe run --cases` (prompts built as the original builds them, scored by its rule)")
    p.add_argument("set", choices=sets, metavar="SET", help=f"which published set the file is from: {', '.join(sets)} "
                   "(longbench-v2: its data.json; "
                   "longmemeval: its JSON, graded by its judge prompts through --judge; oolong-synth, oolong-real: "
                   "the split's parquet or JSON lines)")
    p.add_argument("path", help="the file (nothing is downloaded)")
    p.add_argument("-o", "--output", required=True, help="the pack to write (JSONL)")
    p.add_argument("--tokenizer", required=True, help="the tokenizer of the model it will be sent to")
    p.add_argument("--model", help="the model the pack names (run --cases --model can override)")
    p.add_argument("--parse", choices=("lm-eval", "card", "nemo"), default="lm-eval",
                   help="graphwalks: how the answer line is read (default %(default)s)")
    p.add_argument("--empty-gold", choices=("zero", "one"), default="zero",
                   help="graphwalks: score of an empty answer to an empty gold set (zero: lm-eval; one: NeMo-Skills)")
    p.add_argument("--history-format", choices=("json", "nl"), default="json",
                   help="longmemeval: sessions as JSON turn lists or role: content lines (default %(default)s)")
    p.add_argument("--reading", choices=("con", "direct"), default="con",
                   help="longmemeval: step-by-step reading (con) or a plain answer (default %(default)s)")
    p.add_argument("--judge", metavar="MODEL", help="longmemeval: the judge the pack names (run --cases --judge "
                   "can override; LongMemEval's own is gpt-4o-2024-08-06)")
    p.set_defaults(func=cmd_import_published)

    p = sub.add_parser("import-inspect", help="store inspect_ai logs of ctxprobe's tasks (inspect eval "
                       "ctxprobe/FAMILY) as runs: report, compare and check read them")
    p.add_argument("logs", nargs="+", metavar="LOG", help="inspect log files (.eval or .json)")
    _add_store(p)
    p.set_defaults(func=cmd_import_inspect)

    p = sub.add_parser("import-lm-eval", help="store lm-eval's --log_samples output of an exported run "
                       "(export --lm-eval) as a run")
    p.add_argument("samples", nargs="+", metavar="SAMPLES", help="lm-eval's samples_<task>_<date>.jsonl files")
    _add_store(p)
    p.add_argument("--source-store", metavar="PATH",
                   help="store holding the exported run when it is not --store")
    p.set_defaults(func=cmd_import_lm_eval)


def cmd_import_published(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.sweep.published import write_published_pack

    n = write_published_pack(args.set, args.path, args.output, args.tokenizer, model=args.model, parse=args.parse,
                             empty_gold=args.empty_gold, history_format=args.history_format, reading=args.reading,
                             judge=args.judge)
    out.print(f"wrote {n} cases to {args.output}; send them with `ctxprobe run --cases {args.output} --model MODEL`")
    return 0
