"""Peak memory of a sweep of 1M-token cases vs the size of its cases.

Each variant runs in its own subprocess (so ``ru_maxrss`` is that sweep's peak alone):

- ``sweep``: ``ctxprobe.sweep.run.run_sweep`` as wired today (cases keep ``prompt_ids`` as a
  Python list; the runner's queue holds 2 × concurrency cases);
- ``fixed``: the same spec through :func:`ctxprobe.sweep.standalone.run_cases` with the
  issue-8 bounds — ``slim_case`` (ids packed into a 4-byte array for the sim) and a
  :class:`~ctxprobe.runner.memory.MemoryGate` of ``--live`` tokens of live cases.

The model is ``sim:perfect`` (in process), the tokenizer the embedded GGUF's. Prints the
baseline RSS (imports + tokenizer), the peak, the grid's total prompt size, and ratios.

    python benchmarks/bench_memory.py [--length 1m] [--reps 2] [--concurrency 8] [--live 4m]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Bytes a built case holds per prompt token: a list slot (8) + an int object (28), ~4.4
#: bytes of prompt text; measured: ~45 MB for a 1M-token niah case.
_CASE_BYTES_PER_TOKEN = 8 + 28 + 4.4


def child(variant: str, store: str, args: argparse.Namespace) -> None:
    from ctxprobe.spec import make_spec, parse_length
    from ctxprobe.tokenizers import resolve_tokenizer

    resolve_tokenizer("local").count("warm up")
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": args.length,
                      "depths": "0,0.25,0.5,0.75,1", "reps": args.reps, "concurrency": args.concurrency})
    start = time.perf_counter()
    if variant == "sweep":
        from ctxprobe.sweep.run import run_sweep

        sent = run_sweep(spec, store, progress=False).sent
        peak_live = None
    else:
        from ctxprobe.sweep.standalone import run_cases

        result = run_cases(spec, store, live_tokens=parse_length(args.live))
        sent, peak_live = result.sent, result.peak_live_tokens
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"variant": variant, "base": base, "peak": peak, "sent": sent, "peak_live_tokens": peak_live,
                      "seconds": time.perf_counter() - start}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", default="1m")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--live", default="4m", help="token budget of live cases for the fixed variant")
    ap.add_argument("--variants", default="sweep,fixed")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.store, args)
        return

    from ctxprobe.spec import parse_length

    tokens = parse_length(args.length)
    n_cases = 5 * args.reps
    grid_bytes = n_cases * tokens * _CASE_BYTES_PER_TOKEN
    print(f"{n_cases} cases of {tokens:,} tokens, concurrency {args.concurrency}; the grid's cases built at "
          f"once would hold ~{grid_bytes / 2**30:.2f} GiB (~{tokens * _CASE_BYTES_PER_TOKEN / 2**20:.0f} MiB each)")
    with tempfile.TemporaryDirectory() as d:
        for variant in args.variants.split(","):
            cmd = [sys.executable, __file__, "--child", variant, "--store", str(Path(d) / f"{variant}.sqlite"),
                   "--length", args.length, "--reps", str(args.reps), "--concurrency", str(args.concurrency),
                   "--live", args.live]
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                print(f"  {variant}: failed\n{out.stderr[-2000:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            over = r["peak"] - r["base"]
            live = f", peak live tokens {r['peak_live_tokens']:,}" if r["peak_live_tokens"] else ""
            print(f"  {variant:<6} peak RSS {r['peak'] / 2**20:6.0f} MiB (baseline {r['base'] / 2**20:.0f} MiB, "
                  f"sweep adds {over / 2**20:.0f} MiB = {over / grid_bytes:.2f} of the grid's case size, "
                  f"{over / (tokens * _CASE_BYTES_PER_TOKEN):.1f} cases' worth){live}; "
                  f"{'UNDER' if r['peak'] < 2**30 else 'OVER'} 1 GiB; {r['sent']} sent in {r['seconds']:.0f} s")


if __name__ == "__main__":
    main()
