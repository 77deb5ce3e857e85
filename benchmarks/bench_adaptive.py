"""Adaptive sweep vs the full fixed grid on simulated models with known effective lengths.

For each ``sim:decay`` model (P(correct) = 1 - noise up to ``cliff`` prompt tokens, then
falling linearly to 0 over ``width``), the true effective length follows from its
definition and the lengths grid: the longest length before the first one where
P(correct) < the bar. Models whose P(correct) sits within ``--margin`` of the bar at some
length are skipped: there even the full grid's decision is a coin flip, so "agreement"
would measure the grid's noise, not the adaptive sweep.

Each model is run twice, into separate stores:
  * the full fixed grid: every length × 5 depths × 20 repetitions (run_sweep);
  * the adaptive sweep (ctxprobe.adaptive.adaptive_sweep, default settings).
Printed: per model the true / grid / adaptive effective lengths and the prompt tokens each
spent; then how often adaptive agrees with the grid (and with the truth) and the token ratio.

    .venv/bin/python benchmarks/bench_adaptive.py              # 6 models, ~2-3 min on 2 cores
    .venv/bin/python benchmarks/bench_adaptive.py --models 20  # more random models, slower
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

LENGTHS = [512, 1024, 2048, 3072, 4096]
THRESHOLD = 0.856

#: (cliff, width, noise): hand-picked to put the bend at every place on the grid.
CURATED = [
    (700, 800, 0.0),     # fails from 1K: effective 512
    (1100, 1500, 0.02),  # effective 1K
    (2100, 600, 0.02),   # effective 2K, sharp cliff
    (2100, 2000, 0.05),  # effective 2K, slow decay and noise
    (3200, 400, 0.03),   # effective 3K
    (5000, 1000, 0.0),   # every length clears: 4K
]


@dataclass(frozen=True)
class Outcome:
    model: str
    truth: int | None
    grid: int | None
    adaptive: int | None
    grid_tokens: int
    adaptive_tokens: int
    adaptive_decided: bool
    seconds: float


def p_correct(tokens: int, cliff: int, width: int, noise: float) -> float:
    """sim:decay's definition (ctxprobe.models.sim.SimModel.p_correct), restated for clarity."""
    base = 1.0 - noise
    if tokens <= cliff:
        return base
    if width == 0:
        return 0.0
    return base * max(0.0, 1.0 - (tokens - cliff) / width)


def true_effective(cliff: int, width: int, noise: float) -> int | None:
    best = None
    for length in LENGTHS:
        if p_correct(length, cliff, width, noise) < THRESHOLD:
            break
        best = length
    return best


def clear_enough(cliff: int, width: int, noise: float, margin: float) -> bool:
    """P(correct) is at least ``margin`` from the bar over the ~2% a case falls short of its length."""
    for length in LENGTHS:
        for tokens in (int(length * 0.97), length):
            if abs(p_correct(tokens, cliff, width, noise) - THRESHOLD) < margin:
                return False
    return True


def models(n: int, margin: float, seed: int) -> list[tuple[int, int, float, int]]:
    out = [(c, w, z, i) for i, (c, w, z) in enumerate(CURATED) if clear_enough(c, w, z, margin)][:n]
    rng = random.Random(seed)
    while len(out) < n:
        c, w, z = rng.randint(256, 5000), rng.randint(100, 3000), rng.choice([0.0, 0.01, 0.02, 0.03, 0.05])
        if clear_enough(c, w, z, margin):
            out.append((c, w, z, len(out)))
    return out


def run_one(cliff: int, width: int, noise: float, model_seed: int) -> Outcome:
    from ctxprobe.adaptive import adaptive_sweep
    from ctxprobe.results import load_report
    from ctxprobe.spec import make_spec
    from ctxprobe.store import Store
    from ctxprobe.sweep import run_sweep

    start = time.monotonic()
    model = f"sim:decay?cliff={cliff}&width={width}&noise={noise}&seed={model_seed}"
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": LENGTHS,
                      "depths": [0.0, 0.25, 0.5, 0.75, 1.0], "reps": 20, "threshold": THRESHOLD})
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None  # SQLite commits are fsync-bound on disk
    tmp = tempfile.mkdtemp(prefix="ctxprobe-bench-", dir=base)
    try:
        grid_store = os.path.join(tmp, "grid.sqlite")
        result = run_sweep(spec, grid_store, progress=False)
        grid = load_report(result.run_id, grid_store).profiles[0].effective_length
        with Store(grid_store) as store:
            grid_tokens = sum(r.token_count for r in store.result_rows(result.run_id))
        adaptive = adaptive_sweep(spec, os.path.join(tmp, "adaptive.sqlite"))
        return Outcome(model, true_effective(cliff, width, noise), grid,
                       adaptive.families[0].grid_effective_length, grid_tokens, adaptive.tokens_spent,
                       adaptive.decided, time.monotonic() - start)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=len(CURATED), help="number of sim models (default 6)")
    ap.add_argument("--margin", type=float, default=0.06, help="skip models this close to the bar")
    ap.add_argument("--seed", type=int, default=0, help="seed for the random extra models")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()

    chosen = models(args.models, args.margin, args.seed)
    t0 = time.monotonic()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        outcomes = list(pool.map(run_one, *zip(*chosen)))

    def lab(v: int | None) -> str:
        return "none" if v is None else str(v)

    print(f"lengths {LENGTHS}, bar {THRESHOLD}, full grid = 5 depths x 20 reps, adaptive = defaults")
    print(f"{'model':<52} {'true':>5} {'grid':>5} {'adapt':>5} {'grid tok':>10} {'adapt tok':>10} {'ratio':>6}")
    for o in outcomes:
        flag = "" if o.adaptive == o.grid else "  <- disagrees"
        print(f"{o.model:<52} {lab(o.truth):>5} {lab(o.grid):>5} {lab(o.adaptive):>5} {o.grid_tokens:>10,} "
              f"{o.adaptive_tokens:>10,} {o.adaptive_tokens / o.grid_tokens:>6.1%}{flag}")
    n = len(outcomes)
    agree = sum(o.adaptive == o.grid for o in outcomes)
    truth = sum(o.adaptive == o.truth for o in outcomes)
    grid_truth = sum(o.grid == o.truth for o in outcomes)
    ratio = sum(o.adaptive_tokens for o in outcomes) / sum(o.grid_tokens for o in outcomes)
    ratios = sorted(o.adaptive_tokens / o.grid_tokens for o in outcomes)
    print(f"adaptive agrees with the full grid: {agree}/{n} ({agree / n:.0%}); with the truth: {truth}/{n}; "
          f"grid with the truth: {grid_truth}/{n}; adaptive confident: {sum(o.adaptive_decided for o in outcomes)}/{n}")
    print(f"token ratio adaptive/grid: {ratio:.1%} overall, median {ratios[n // 2]:.1%}, worst {ratios[-1]:.1%}")
    print(f"wall time {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
