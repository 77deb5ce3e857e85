"""Peak memory (total PSS of the process tree) of a sweep of 1M-token cases.

Each variant runs as its own subprocess; this script samples every 0.1 s the proportional
set size (``Pss`` of ``/proc/<pid>/smaps_rollup``: shared pages split between the processes
that map them, so the sum over processes is the machine's real cost) of that process and
every descendant (build workers), and reports the peak of the sum, the peak of the main
process alone, and the peak of the workers together.

- ``serial``: ``--build-workers 1`` (cases built in the sweep's own process);
- ``workers``: ``--build-workers N`` (default 4; spawn workers build whole (length, rep)
  groups and hand back compact cases).

Both use ``sim:perfect`` (in process), the embedded GGUF's tokenizer, depths 0..1 (5),
``--reps`` repetitions, ``--concurrency`` and the live-token gate ``--live``.

    python benchmarks/bench_memory.py [--length 1m] [--reps 2] [--concurrency 8] [--live 4m] [--workers 4]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (read from /proc/*/stat parent ids)."""
    parent: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    stat = f.read()
                parent[int(name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, frontier = [], [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        frontier += kids
    return out


def child(args: argparse.Namespace) -> None:
    from ctxprobe.runner.standalone import run_cases
    from ctxprobe.spec import make_spec, parse_length

    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": args.length,
                      "depths": "0,0.25,0.5,0.75,1", "reps": args.reps, "concurrency": args.concurrency})
    start = time.perf_counter()
    result = run_cases(spec, args.store, build_workers=args.build_workers, live_tokens=parse_length(args.live))
    print(json.dumps({"sent": result.sent, "peak_live_tokens": result.peak_live_tokens,
                      "seconds": time.perf_counter() - start}))


def measure(cmd: list[str]) -> tuple[dict, int, int, int, int]:
    """Run ``cmd``; (its JSON line, peak total PSS, peak main PSS, peak workers PSS, most processes) in KiB."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_total = peak_main = peak_workers = most = 0
    while proc.poll() is None:
        main = pss_kib(proc.pid)
        kids = descendants(proc.pid)
        workers = sum(pss_kib(k) for k in kids)
        peak_total, peak_main = max(peak_total, main + workers), max(peak_main, main)
        peak_workers, most = max(peak_workers, workers), max(most, 1 + len(kids))
        time.sleep(0.1)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(err[-3000:])
    return json.loads(out.strip().splitlines()[-1]), peak_total, peak_main, peak_workers, most


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", default="1m")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--live", default="4m", help="token budget of live cases (--live-tokens)")
    ap.add_argument("--workers", type=int, default=4, help="build workers of the 'workers' variant")
    ap.add_argument("--variants", default="serial,workers")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--build-workers", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    print(f"{5 * args.reps} cases of {args.length} tokens, concurrency {args.concurrency}, --live-tokens {args.live}; "
          "peak PSS summed over the sweep's process and its build workers (sampled every 0.1 s)")
    with tempfile.TemporaryDirectory() as d:
        for variant in args.variants.split(","):
            workers = 1 if variant == "serial" else args.workers
            cmd = [sys.executable, __file__, "--child", "--store", str(Path(d) / f"{variant}.sqlite"),
                   "--length", args.length, "--reps", str(args.reps), "--concurrency", str(args.concurrency),
                   "--live", args.live, "--build-workers", str(workers)]
            r, total, main_, kids, most = measure(cmd)
            print(f"  {variant:<8} --build-workers {workers}: total PSS {total / 1024:6.0f} MiB "
                  f"(main {main_ / 1024:.0f} MiB, workers {kids / 1024:.0f} MiB, {most} processes); "
                  f"{'UNDER' if total < 1024 * 1024 else 'OVER'} 1 GiB; {r['sent']} sent in {r['seconds']:.0f} s; "
                  f"peak live tokens {r['peak_live_tokens']:,}")


if __name__ == "__main__":
    main()
