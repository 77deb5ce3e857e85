"""Coverage of a sampled cell's accuracy interval (``samples=k``), simulated with known truth.

A decoding variant sends each case k times. The k samples of a case hold one prompt, so
they are correlated: a case the model finds hard is missed by most of its samples. This
draws n cases whose success probabilities p_i vary around a known mean (Beta with
intra-case correlation ICC; ICC 1: every case always right or always wrong), k samples of
each, builds the rows a stored run would hand the report (``ResultRow.sample`` set), and
counts how often each interval contains the true mean:

* ``wilson``: the samples counted as independent cases (what the report printed before):
  the same rows with the sample index dropped, through ``analysis.grid.cell_stats``;
* ``clustered``: what the report prints now (``analysis.sampled``, through the same
  ``cell_stats``);
* ``lower``: the one-sided lower bound at alpha/2 that "reliable up to" rests on
  (``analysis.efflength``), clustered, and the same bound over independent samples.

Printed per (n cases, mean, ICC): two-sided coverage of Wilson and clustered (nominal
0.95), one-sided coverage of the lower bound (nominal 0.975) both ways, and the mean
width of the clustered interval against Wilson's.

    python benchmarks/coverage_sampled.py                # 1,000 simulations a row
    python benchmarks/coverage_sampled.py --sims 4000 --k 10
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxprobe.analysis.efflength import effective_lengths  # noqa: E402
from ctxprobe.analysis.grid import cell_stats  # noqa: E402
from ctxprobe.core.rows import ResultRow  # noqa: E402

CASES = (5, 10, 20, 40)
MEANS = (0.5, 0.8, 0.95)
ICCS = (0.1, 0.3, 0.5, 0.7, 1.0)


def draw_p(rng: random.Random, mean: float, icc: float) -> float:
    """A case's success probability: Beta(mean·s, (1−mean)·s), s = (1−ICC)/ICC; ICC 1: 0 or 1."""
    if icc >= 1.0:
        return 1.0 if rng.random() < mean else 0.0
    s = (1.0 - icc) / icc
    return rng.betavariate(mean * s, (1.0 - mean) * s)


def sampled_rows(rng: random.Random, n: int, k: int, mean: float, icc: float) -> list[ResultRow]:
    rows = []
    for rep in range(n):
        p = draw_p(rng, mean, icc)
        for s in range(k):
            right = rng.random() < p
            rows.append(ResultRow("niah~t07", 1024, 0.5, rep, "correct" if right else "wrong", float(right), 1024,
                                  sample=s))
    return rows


def row(rng: random.Random, n: int, k: int, mean: float, icc: float, sims: int) -> dict[str, float]:
    hits = {"wilson": 0, "clustered": 0, "lower_wilson": 0, "lower_clustered": 0}
    width = {"wilson": 0.0, "clustered": 0.0}
    for _ in range(sims):
        rows = sampled_rows(rng, n, k, mean, icc)
        flat = [replace(r, sample=None) for r in rows]
        for name, data in (("clustered", rows), ("wilson", flat)):
            cell = cell_stats(data)[0]
            hits[name] += cell.lo <= mean <= cell.hi
            width[name] += cell.hi - cell.lo
            lower = effective_lengths(data, threshold=0.5, draws=1)[0].lower_bounds[1024]
            hits[f"lower_{name}"] += lower <= mean
    return {**{key: v / sims for key, v in hits.items()}, **{f"width_{key}": v / sims for key, v in width.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--k", type=int, default=5, help="samples per case (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    start = time.perf_counter()
    print(f"k = {args.k} samples per case, {args.sims} simulations a row; coverage of the true mean")
    print("                    two-sided (0.95)    lower end (0.975)   width")
    print("  cases mean  ICC    wilson clustered    wilson clustered   clustered/wilson")
    worst = {"wilson": 1.0, "clustered": 1.0, "lower_wilson": 1.0, "lower_clustered": 1.0}
    for n in CASES:
        for mean in MEANS:
            for icc in ICCS:
                r = row(rng, n, args.k, mean, icc, args.sims)
                for key in worst:
                    worst[key] = min(worst[key], r[key])
                print(f"  {n:5d} {mean:4.2f} {icc:4.1f}    {r['wilson']:6.3f} {r['clustered']:9.3f}    "
                      f"{r['lower_wilson']:6.3f} {r['lower_clustered']:9.3f}   "
                      f"{r['width_clustered']:.3f}/{r['width_wilson']:.3f}")
    print(f"worst: two-sided wilson {worst['wilson']:.3f}, clustered {worst['clustered']:.3f}; lower end wilson "
          f"{worst['lower_wilson']:.3f}, clustered {worst['lower_clustered']:.3f} "
          f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
