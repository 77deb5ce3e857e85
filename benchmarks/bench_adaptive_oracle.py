"""Adaptive sweep tokens vs the oracle minimum, the fixed grid, and its error rate.

The oracle is the fewest cases a *fixed-size* exact test needs when it knows the true
accuracies: at each length the walk must pass (every length below the first truly
failing one) the smallest n whose one-sided Clopper-Pearson lower bound at α/2 clears the
bar with 80% probability; at the first failing length, the smallest n whose upper bound at
α/(2K) is below the bar with 80% probability; nothing above it. (The bounds the report's
effective-length interval uses; the depth-pooled accuracy, cases counted one by one.)
No test that has to work without knowing the accuracies -- let alone one that may stop
whenever it likes -- can beat it on average by much, so it is the yardstick.

The adaptive sweep runs through the same loop ``ctxprobe run --adaptive`` uses
(``ctxprobe.sweep.adaptive.run_adaptive``, its defaults, 3 depths, the default budget =
the 5-depth × 20-rep grid), answered at the outcome level: each case is a Bernoulli draw
with the model's true P(correct) at its length and depth, seeded per case. Only prompt
building and model calls are skipped; the loop never sees the true rates.

Printed per model, over ``--seeds`` seeds: the oracle's tokens, the adaptive sweep's mean
tokens and their ratio, the ratio of its 90th percentile, its mean share of the grid's
tokens, how often it ended confident, how often it was confident and wrong (≤ 5% promised
at any accuracy), and its mean rounds.

    python benchmarks/bench_adaptive_oracle.py             # 100 seeds per model
    python benchmarks/bench_adaptive_oracle.py --seeds 20
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxprobe.analysis.bootstrap import ThresholdRule, walk  # noqa: E402
from ctxprobe.analysis.efflength import betainc  # noqa: E402
from ctxprobe.core.rows import ResultRow  # noqa: E402
from ctxprobe.plan.grid import PlannedCase  # noqa: E402
from ctxprobe.sweep.adaptive import BUDGET_CASES_PER_LENGTH, AdaptivePlan, Settings, run_adaptive  # noqa: E402

LENGTHS = [1024, 2048, 4096]
DEPTHS = [0.0, 0.5, 1.0]
BAR = 0.856
ALPHA = 0.05
POWER = 0.8


def flat(p: float) -> list[list[float]]:
    return [[p] * len(DEPTHS) for _ in LENGTHS]


#: name -> true P(correct) per length, per depth; "clear" ones carry the 1.3× target
CLEAR: dict[str, list[list[float]]] = {
    "perfect": flat(1.0),
    "cliff at 3,000 tokens": [[1.0] * 3, [1.0] * 3, [0.0] * 3],
    "echo (distractors: 0)": flat(0.0),
    "blind-middle": [[1.0, 0.0, 1.0]] * 3,
}
OTHER: dict[str, list[list[float]]] = {
    "0.95 to 3,000, then 0": [[0.95] * 3, [0.95] * 3, [0.0] * 3],
    "0.99 to 3,000, then 0.1": [[0.99] * 3, [0.99] * 3, [0.1] * 3],
}
NEAR: dict[str, list[list[float]]] = {
    "flat at the bar (0.856)": flat(BAR),
    "flat bar+0.03": flat(BAR + 0.03),
    "flat bar-0.03": flat(BAR - 0.03),
    "flat bar+0.06": flat(BAR + 0.06),
    "0.99, 0.99, bar-0.06": [[0.99] * 3, [0.99] * 3, [BAR - 0.06] * 3],
}


def pooled(rates: list[list[float]]) -> list[float]:
    return [sum(r) / len(r) for r in rates]


def truth(rates: list[list[float]]) -> int | None:
    return walk(LENGTHS, pooled(rates), BAR)


def upper_tail(n: int, p: float, c: int) -> float:
    """P(Binomial(n, p) >= c)."""
    if c <= 0:
        return 1.0
    if c > n:
        return 0.0
    return betainc(c, n - c + 1, p)


def _smallest(n: int, ok: Callable[[int], bool]) -> int | None:
    """Smallest c in 0..n+1 with ok(c), for ok monotone (False then True); None if none."""
    lo, hi = 0, n + 1
    if not ok(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def oracle_pass(p: float, level: float, cap: int = 3000) -> int | None:
    """Fewest n whose exact lower bound at ``level`` clears the bar with probability POWER."""
    for n in range(1, cap):
        c = _smallest(n, lambda c, n=n: upper_tail(n, BAR, c) <= level)  # fewest successes that clear
        if c is not None and c <= n and upper_tail(n, p, c) >= POWER:
            return n
    return None


def oracle_fail(p: float, level: float, cap: int = 3000) -> int | None:
    """Fewest n whose exact upper bound at ``level`` is below the bar with probability POWER."""
    for n in range(1, cap):
        # most successes c with P(Bin(n, bar) <= c) <= level: one less than the fewest that does not
        first_not = _smallest(n, lambda c, n=n: 1.0 - upper_tail(n, BAR, c + 1) > level)
        c = (first_not if first_not is not None else n + 1) - 1
        if c >= 0 and 1.0 - upper_tail(n, p, c + 1) >= POWER:
            return n
    return None


def oracle_tokens(rates: list[list[float]]) -> int | None:
    total = 0
    for length, p in zip(LENGTHS, pooled(rates)):
        n = oracle_pass(p, ALPHA / 2) if p >= BAR else oracle_fail(p, ALPHA / (2 * len(LENGTHS)))
        if n is None:
            return None
        total += n * length
        if p < BAR:
            break
    return total


class SimSource:
    """Answers planned cases by Bernoulli draws: seeded per (seed, case), like a resumable store."""

    def __init__(self, rates: list[list[float]], seed: int) -> None:
        self.p = {(L, d): r for L, row in zip(LENGTHS, rates) for d, r in zip(DEPTHS, row)}
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


def measure(rates: list[list[float]], seeds: int) -> dict[str, float]:
    settings = Settings()
    budget = BUDGET_CASES_PER_LENGTH * sum(LENGTHS)
    true = truth(rates)
    confident = wrong = rounds = tokens = over = 0
    spends: list[int] = []
    for seed in range(seeds):
        source = SimSource(rates, seed)
        plan = AdaptivePlan(["niah"], LENGTHS, DEPTHS, settings.coarse_reps)
        decided, _, n_rounds, [fam], _ = run_adaptive(plan, source, ThresholdRule("absolute", BAR), settings, budget)
        spent = sum(r.token_count for r in source.rows())
        confident += decided
        wrong += decided and fam.grid_effective_length != true
        rounds += n_rounds
        tokens += spent
        spends.append(spent)
        over += spent > budget
    p90 = sorted(spends)[min(len(spends) - 1, (9 * len(spends)) // 10)]
    return {"tokens": tokens / seeds, "confident": confident / seeds, "wrong": wrong / seeds,
            "rounds": rounds / seeds, "over": over, "p90": p90}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=100)
    args = ap.parse_args()
    grid = BUDGET_CASES_PER_LENGTH * sum(LENGTHS)
    t0 = time.monotonic()
    print(f"lengths {LENGTHS}, depths {DEPTHS}, bar {BAR}, alpha {ALPHA}; grid = budget = {grid:,} tokens; "
          f"{args.seeds} seeds a model")
    print(f"{'model':<24} {'oracle':>8} {'adaptive':>8} {'ratio':>6} {'p90':>6} {'/grid':>5} {'conf':>5} "
          f"{'wrong':>5} {'rounds':>6}")
    worst_clear, worst_wrong, over = 0.0, 0.0, 0
    for group, models in (("clear", CLEAR), ("other", OTHER), ("near the bar", NEAR)):
        print(f"-- {group}")
        for name, rates in models.items():
            oracle = oracle_tokens(rates)
            m = measure(rates, args.seeds)
            ratio = m["tokens"] / oracle if oracle else None
            if group == "clear" and ratio is not None:
                worst_clear = max(worst_clear, ratio)
            worst_wrong = max(worst_wrong, m["wrong"])
            over += int(m["over"])
            p90 = f"{m['p90'] / oracle:.2f}x" if oracle else "-"
            print(f"{name:<24} {oracle or 0:>8,} {m['tokens']:>8,.0f} "
                  f"{(f'{ratio:.2f}x' if ratio else '-'):>6} {p90:>6} {m['tokens'] / grid:>5.0%} "
                  f"{m['confident']:>5.0%} {m['wrong']:>5.0%} {m['rounds']:>6.1f}")
    print(f"clear models: worst {worst_clear:.2f}x the oracle (target <= 1.3x); worst confident-and-wrong "
          f"{worst_wrong:.1%} (<= 5%); runs over the grid's tokens: {over}; {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
