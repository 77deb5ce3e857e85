"""Coverage of the effective-length interval (ctxprobe.analysis.efflength), simulated.

For models whose true accuracy per (length, depth) is known, draw a sweep's outcomes
(Bernoulli per case), compute the interval exactly as the report does, and count how often
it contains the true effective length (the walk on the true pooled accuracies). The claim
to check: coverage ≥ 95% at every repetition count, including models right at the bar.

Simulated at the outcome level (no prompts are built or sent): the interval only ever sees
outcomes, so this measures exactly what the report computes, thousands of times faster.

    python benchmarks/coverage_efflength.py                 # 1, 3, 10 reps; 1000 sweeps each
    python benchmarks/coverage_efflength.py --sweeps 4000
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxprobe.analysis.efflength import effective_lengths  # noqa: E402
from ctxprobe.core.rows import ResultRow# noqa: E402

LENGTHS = (1024, 2048, 4096, 8192, 16384)
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)
BAR = 0.856

#: name -> per length, per depth true P(correct)
MODELS: dict[str, list[list[float]]] = {
    "at the bar everywhere": [[BAR] * 5] * 5,
    "at the bar, then fails": [[0.97] * 5, [BAR] * 5, [BAR] * 5, [0.6] * 5, [0.1] * 5],
    "just below the bar at 4K": [[0.95] * 5, [0.9] * 5, [0.83] * 5, [0.5] * 5, [0.0] * 5],
    "perfect": [[1.0] * 5] * 5,
    "sharp cliff after 2K": [[1.0] * 5, [0.98] * 5, [0.2] * 5, [0.0] * 5, [0.0] * 5],
    # pooled exactly at the bar through a U shape: middle depths worse than the ends
    "U shape, pooled at the bar": [[0.99] * 5] + [[0.95, 0.85, 0.71, 0.82, 0.95]] * 4,
}


def truth(model: list[list[float]]) -> int | None:
    best = None
    for length, rates in zip(LENGTHS, model):
        if sum(rates) / len(rates) < BAR - 1e-12:
            break
        best = length
    return best


def sweep(model: list[list[float]], reps: int, rng: random.Random) -> list[ResultRow]:
    return [ResultRow("niah", L, d, r, "x", float(rng.random() < p))
            for L, rates in zip(LENGTHS, model) for d, p in zip(DEPTHS, rates) for r in range(reps)]


def coverage(model: list[list[float]], reps: int, sweeps: int, seed: int) -> tuple[float, float, float]:
    """(coverage, share of sweeps whose point estimate is right, share saying 'reliable up to' the truth)."""
    rng = random.Random(seed)
    key = lambda v: -1 if v is None else v  # noqa: E731
    true = key(truth(model))
    covered = point = exact = 0
    for _ in range(sweeps):
        [iv] = effective_lengths(sweep(model, reps, rng), threshold=BAR, draws=1)
        covered += key(iv.lo) <= true <= key(iv.hi)
        point += key(iv.point) == true
        exact += iv.exact and key(iv.lo) == true
    return covered / sweeps, point / sweeps, exact / sweeps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweeps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"lengths {LENGTHS}, 5 depths, bar {BAR}, 95% interval, {args.sweeps} simulated sweeps per row")
    print(f"{'model':<28} {'reps':>4} {'coverage':>9} {'point right':>11} {'pinned':>7}")
    worst = 1.0
    for name, model in MODELS.items():
        for reps in (1, 3, 10):
            cov, pt, ex = coverage(model, reps, args.sweeps, args.seed)
            worst = min(worst, cov)
            print(f"{name:<28} {reps:>4} {cov:>9.1%} {pt:>11.1%} {ex:>7.1%}")
    print(f"worst coverage {worst:.1%} (target >= 95%); 'pinned' = interval is one length and it is the truth")


if __name__ == "__main__":
    main()
