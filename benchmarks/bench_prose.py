"""How fast built-in prose is generated: sentences and words per second (a measurement,
not a test; the tests assert no elapsed time).

    python benchmarks/bench_prose.py [--sentences 60000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import itertools
import time

from ctxprobe.haystack import prose_sentences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=60_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    best = float("inf")
    words = 0
    for seed in range(args.repeats):
        start = time.process_time()
        out = list(itertools.islice(prose_sentences(seed), args.sentences))
        best = min(best, time.process_time() - start)
        words = sum(len(s.split()) for s in out)
    print(f"{args.sentences:,} sentences ({words:,} words) in {best:.3f} s CPU (best of {args.repeats}): "
          f"{args.sentences / best:,.0f} sentences/s, {words / best:,.0f} words/s")


if __name__ == "__main__":
    main()
