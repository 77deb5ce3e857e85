"""Adaptive sweep vs the full fixed grid, with models at and near the bar, over many seeds.

Simulated at the outcome level: every case the adaptive loop asks for is answered by a
Bernoulli draw with the model's true P(correct) at that length (seeded per case), through
the same decision loop the real sweep runs (``ctxprobe.sweep.adaptive.run_adaptive`` with the
defaults of ``ctxprobe run --adaptive``); only prompt building and model calls are skipped,
which is what makes 20+ seeds of a dozen models take seconds instead of hours. The loop
never sees the true rates, only outcomes.

Per model, over ``--seeds`` seeds:
  * wrong-confident: the sweep said "confident" and its effective length is not the truth
    (the rule's promise: at most 5% at ANY true accuracy, the bar itself included);
  * agreement with the full grid: same effective length as a 5-depth × 20-rep grid drawn
    from the same model (the grid is a point estimate and is itself wrong near the bar);
  * token share: the adaptive sweep's prompt tokens / the full grid's.

    python benchmarks/bench_adaptive.py             # 100 seeds per model
    python benchmarks/bench_adaptive.py --seeds 20
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxprobe.sweep.adaptive import BUDGET_CASES_PER_LENGTH, Settings, AdaptivePlan, run_adaptive  # noqa: E402
from ctxprobe.analysis.bootstrap import ThresholdRule, walk  # noqa: E402
from ctxprobe.core.rows import ResultRow# noqa: E402
from ctxprobe.plan.grid import PlannedCase  # noqa: E402

LENGTHS = [512, 1024, 2048, 3072, 4096]
DEPTHS = [0.0, 0.25, 0.5, 0.75, 1.0]
BAR = 0.856
GRID_REPS = 20


def _flat(p: float) -> list[float]:
    return [p] * len(LENGTHS)


#: name -> true P(correct) per length (depth-independent)
MODELS: dict[str, list[float]] = {
    "perfect": _flat(1.0),
    "cliff after 1K": [1.0, 0.99, 0.1, 0.0, 0.0],
    "decay, bend at 2K": [0.98, 0.97, 0.93, 0.6, 0.3],
    "flat at the bar (0.856)": _flat(BAR),
    "flat 0.90 (issue's example)": _flat(0.90),
    "flat bar+0.02": _flat(BAR + 0.02),
    "flat bar-0.02": _flat(BAR - 0.02),
    "bar+0.06 then bar-0.06": [0.99, BAR + 0.06, BAR + 0.06, BAR - 0.06, BAR - 0.06],
    "at the bar at 2K, then fails": [0.99, 0.97, BAR, 0.3, 0.0],
    "bar-0.04 at 3K": [0.99, 0.98, 0.95, BAR - 0.04, 0.2],
    "bar+0.04 at 4K": [0.99, 0.98, 0.95, 0.93, BAR + 0.04],
}

#: name -> true P(correct) per length at the three depths 0, 0.5, 1: the pooled rate is what the
#: bar is about, and a repetition's depths differ (the tests must hold for that too)
DEPTH_MODELS: dict[str, list[list[float]]] = {
    "U over depth, pooled at the bar": [[0.95, 0.668, 0.95]] * len(LENGTHS),
    "U over depth, pooled bar-0.03": [[0.95, 0.608, 0.95]] * len(LENGTHS),
    "blind middle at 2K, bar+0.03": [[1.0] * 3, [1.0] * 3, [1.0, 0.658, 1.0], [0.0] * 3, [0.0] * 3],
}
DEPTHS3 = [0.0, 0.5, 1.0]


def pooled(rates: list[float] | list[list[float]]) -> list[float]:
    return [sum(r) / len(r) if isinstance(r, list) else r for r in rates]


def truth(rates: list[float] | list[list[float]]) -> int | None:
    return walk(LENGTHS, pooled(rates), BAR)


class SimSource:
    """Answers planned cases by Bernoulli draws: seeded per (seed, case), like a resumable store."""

    def __init__(self, rates: list[float] | list[list[float]], seed: int) -> None:
        self.p = {(L, d): (r[i] if isinstance(r, list) else r)
                  for L, r in zip(LENGTHS, rates) for i, d in enumerate(DEPTHS3)}
        self.seed = seed
        self._rows: dict[str, ResultRow] = {}

    def rows(self) -> list[ResultRow]:
        return list(self._rows.values())

    def done_ids(self) -> set[str]:
        return set(self._rows)

    def send(self, cases: list[PlannedCase]) -> None:
        for c in cases:
            ok = random.Random(f"{self.seed}/{c.case_id}").random() < self.p[(c.cell.length, c.cell.depth)]
            self._rows[c.case_id] = ResultRow(c.cell.family, c.cell.length, c.cell.depth, c.rep,
                                              "correct" if ok else "wrong", float(ok), c.cell.length)


def grid_effective(rates: list[float] | list[list[float]], rng: random.Random) -> int | None:
    n = len(DEPTHS) * GRID_REPS
    means = [sum(rng.random() < p for _ in range(n)) / n for p in pooled(rates)]
    return walk(LENGTHS, means, BAR)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=100)
    args = ap.parse_args()
    settings = Settings()  # the CLI's defaults: 95%, 3 depths, the walk's frontier only, no bisection
    budget = BUDGET_CASES_PER_LENGTH * sum(LENGTHS)
    grid_tokens = len(DEPTHS) * GRID_REPS * sum(LENGTHS)
    t0 = time.monotonic()
    print(f"lengths {LENGTHS}, bar {BAR}, grid = 5 depths x {GRID_REPS} reps ({grid_tokens:,} tokens), "
          f"adaptive = defaults (budget {budget:,}), {args.seeds} seeds per model; outcome-level simulation")
    print(f"{'model':<30} {'truth':>5} {'confident':>9} {'wrong-conf':>10} {'=truth':>6} {'=grid':>6} "
          f"{'grid=truth':>10} {'tokens':>7}")
    worst, shares = 0.0, []
    key = lambda v: "none" if v is None else str(v)  # noqa: E731
    models: dict[str, list[float] | list[list[float]]] = {**MODELS, **DEPTH_MODELS}
    for name, rates in models.items():
        true = truth(rates)
        confident = wrong = right = agree = grid_right = 0
        spent = 0
        for seed in range(args.seeds):
            source = SimSource(rates, seed)
            plan = AdaptivePlan(["niah"], LENGTHS, DEPTHS3, settings.coarse_reps)
            decided, _, _, [fam], _ = run_adaptive(plan, source, ThresholdRule("absolute", BAR), settings, budget)
            grid = grid_effective(rates, random.Random(10_000 + seed))
            eff = fam.grid_effective_length
            confident += decided
            wrong += decided and eff != true
            right += eff == true
            agree += eff == grid
            grid_right += grid == true
            spent += sum(r.token_count for r in source.rows())
        n = args.seeds
        share = spent / (n * grid_tokens)
        shares.append(share)
        worst = max(worst, wrong / n)
        print(f"{name:<30} {key(true):>5} {confident / n:>9.0%} {wrong / n:>10.0%} {right / n:>6.0%} "
              f"{agree / n:>6.0%} {grid_right / n:>10.0%} {share:>7.0%}")
    print(f"worst wrong-confident rate {worst:.1%} (target <= 5%); token share median "
          f"{sorted(shares)[len(shares) // 2]:.0%}, max {max(shares):.0%}; {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
