"""Where the adaptive sweep's cases go across depths, and what the spread bet saves.

The adaptive sweep decides a length from *repetitions*: one case at each of its D coarse
depths, whose mean X estimates the depth-averaged accuracy p̄
(:mod:`ctxprobe.analysis.sequential`). Two ways to spend less where the model is sure:

- **the spread bet** (what ``run --adaptive`` does): the "fails" evidence includes a bet
  whose stake follows the spread of the repetition means so far. A depth the model always
  gets right (or always wrong) adds no spread, so a length that fails because one depth is
  weak is decided from the depths that carry the uncertainty, without more cases;
- **Neyman-weighted repetitions**: m_d ≥ 1 cases at depth d, m_d ∝ sqrt(p̃_d (1 - p̃_d))
  (p̃: the Krichevsky-Trofimov estimate from earlier cases at that depth; the smallest
  m_d = 1, at most ``--max-m``), the repetition's X the mean of its per-depth means. Still
  valid (E[X] = p̄, X in [0, 1], m chosen from earlier repetitions only), either always or
  only while the estimate is below the bar.

Same seeds for every column; each case a Bernoulli draw with the model's true P(correct)
at its depth; one length at a time, bar 0.856, the walk's levels for 3 lengths at 95%.
Printed: mean cases to a decision (wrong / undecided runs within ``--cap`` cases), and
the ratios of ``run --adaptive`` to the same test without the spread bet, and of the
weighted repetitions to ``run --adaptive``.

    python benchmarks/bench_adaptive_depths.py [--seeds 40] [--cap 3000] [--max-m 4]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxprobe.analysis.sequential import evidence, levels  # noqa: E402

BAR = 0.856

PROFILES: dict[str, list[float]] = {
    "perfect": [1.0, 1.0, 1.0],
    "flat 0.95": [0.95, 0.95, 0.95],
    "blind-middle": [1.0, 0.0, 1.0],
    "dip to 0.8 at 50%": [1.0, 0.8, 1.0],
    "two at 0.85": [0.85, 1.0, 0.85],
    "flat 0.8": [0.8, 0.8, 0.8],
    "dip to 0.6 at 50%": [1.0, 0.6, 1.0],
    "dip to 0.4 at 50%": [1.0, 0.4, 1.0],
    "flat 0.6": [0.6, 0.6, 0.6],
}
#: column -> (spread bet, when to weight depths)
MODES = {"no spread": (False, "never"), "adaptive": (True, "never"),
         "ney<bar": (True, "below"), "ney all": (True, "always")}


def one_run(profile: list[float], spread: bool, weigh: str, rng: random.Random, cap: int, max_m: int,
            pass_level: float, fail_level: float) -> tuple[int, str]:
    """Cases spent and the decision ("pass", "fail", "open") for one simulated length."""
    depths = len(profile)
    succ, seen = [0.0] * depths, [0] * depths
    means: list[float] = []
    cases = 0
    while cases < cap:
        kt = [(succ[d] + 0.5) / (seen[d] + 1) for d in range(depths)]
        m = [1] * depths
        if weigh == "always" or (weigh == "below" and sum(kt) / depths < BAR):
            sd = [math.sqrt(p * (1 - p)) for p in kt]
            m = [min(max_m, max(1, round(s / min(sd)))) for s in sd]
        parts = []
        for d in range(depths):
            hits = sum(rng.random() < profile[d] for _ in range(m[d]))
            succ[d] += hits
            seen[d] += m[d]
            cases += m[d]
            parts.append(hits / m[d])
        means.append(sum(parts) / depths)
        log_pass, log_fail = evidence(means, depths, BAR, spread=spread)
        if log_pass >= math.log(1 / pass_level):
            return cases, "pass"
        if log_fail >= math.log(1 / fail_level):
            return cases, "fail"
    return cases, "open"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--cap", type=int, default=3000, help="cases at most per run")
    ap.add_argument("--max-m", type=int, default=4, help="neyman: most cases at one depth per repetition")
    args = ap.parse_args()
    pass_level, fail_level = levels(0.05, 3)
    t0 = time.perf_counter()
    print(f"bar {BAR}, pass level {pass_level:.3g}, fail level {fail_level:.3g}, {args.seeds} seeds, "
          f"cap {args.cap} cases;\nmean cases to a decision (wrong/undecided runs)")
    print(f"{'model':<16}{'p-bar':>6}" + "".join(f"{m:>11}" for m in MODES) + f"{'ad/no':>7}{'ney/ad':>7}")
    worst_ours, best_ney, worst_ney = 0.0, math.inf, 0.0
    for name, profile in PROFILES.items():
        truth = "pass" if sum(profile) / len(profile) >= BAR else "fail"
        means, cells = [], []
        for spread, weigh in MODES.values():
            rng = random.Random(f"{name}/{args.seeds}")  # the same draws for every column
            spent, wrong, undecided = [], 0, 0
            for _ in range(args.seeds):
                cases, decision = one_run(profile, spread, weigh, rng, args.cap, args.max_m, pass_level, fail_level)
                spent.append(cases)
                wrong += decision not in (truth, "open")
                undecided += decision == "open"
            means.append(sum(spent) / len(spent))
            cells.append(f"{means[-1]:.0f} ({wrong}/{undecided})".rjust(11))
        ours, ney = means[1] / means[0], means[2] / means[1]
        worst_ours, best_ney, worst_ney = max(worst_ours, ours), min(best_ney, ney), max(worst_ney, ney)
        label = name.replace("dip to ", "dip ")  # the name seeds the draws; the label fits 80 columns
        print(f"{label:<16}{sum(profile) / len(profile):>6.3f}" + "".join(cells) + f"{ours:>6.2f}x{ney:>6.2f}x")
    print(f"adaptive (run --adaptive) vs no spread bet: at worst {worst_ours:.2f}x;\n"
          f"neyman < bar vs adaptive: {best_ney:.2f}x to {worst_ney:.2f}x; {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
