"""How many samples a cell needs: temperature 0 vs 0.7 with k samples per case.

The model is ``sim:perfect?tnoise=X``: at temperature 0 it answers every niah case right;
at temperature t each answer is a miss with probability P(miss) = min(1, t × tnoise)
(:mod:`ctxprobe.sim.sampling`), so at t = 0.7 the effect on a cell's accuracy is exactly
-0.7 × tnoise. The variants are ``t0:temperature=0`` and ``t07:temperature=0.7+samples=k``.

Two parts:

1. An anchor: one real sweep (``run_sweep``: prompts built, sent to the sim, scored,
   stored, paired by ``compare_variants``) per effect size, to show the full pipeline finds
   the effect with the sign and size the sim was given.
2. Power: for cells of n cases, the share of R replications in which the sign-flip test
   of per-case mean differences (``ctxprobe.analysis.compare_samples.samples_test``, the
   test ``compare`` and the variant report use for sampled cases) is significant at
   alpha = 0.05 after Holm over the grid's 4 cells and the pooled test, as ctxprobe
   reports it. Each sample's miss is the sim's own draw (``ctxprobe.sim.sampling.misses``
   on the prompts the niah family builds, with the per-sample nonce the runner sends as
   the seed; replication r uses decoding seed r), so only the sending and storing are
   skipped. The reference is right on every case (sim:perfect at temperature 0).

    python benchmarks/decoding_study.py              # R = 100
    python benchmarks/decoding_study.py --reps 40    # quicker
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxprobe.analysis.compare import holm  # noqa: E402
from ctxprobe.analysis.compare_samples import samples_test  # noqa: E402
from ctxprobe.cases.builder import BuildSettings, CaseBuilder  # noqa: E402
from ctxprobe.core.case import Cell  # noqa: E402
from ctxprobe.core.variant import sample_nonce  # noqa: E402
from ctxprobe.plan.grid import PlannedCase  # noqa: E402
from ctxprobe.report.load import load_report  # noqa: E402
from ctxprobe.sim.sampling import misses  # noqa: E402
from ctxprobe.spec import make_spec  # noqa: E402
from ctxprobe.spec.variants import expand_variants, parse_variants  # noqa: E402
from ctxprobe.sweep.run import run_sweep  # noqa: E402

LENGTHS, DEPTHS = (1024, 2048), (0.0, 1.0)  # 4 cells
TEMPERATURE = 0.7
EFFECTS = (0.05, 0.1, 0.2, 0.35)  # P(miss) at t = 0.7: tnoise = effect / 0.7
KS = (1, 2, 5, 10)
NS = (5, 10, 20)
ALPHA = 0.05


def anchor(effect: float, k: int, reps: int) -> str:
    tnoise = effect / TEMPERATURE
    families = expand_variants({"niah": {}}, parse_variants(f"t0:temperature=0, t07:temperature=0.7+samples={k}"))
    spec = make_spec({"model": f"sim:perfect?tnoise={tnoise:.6g}", "tokenizer": "local",
                      "lengths": ",".join(map(str, LENGTHS)), "depths": ",".join(map(str, DEPTHS)), "reps": reps,
                      "families": families})
    with tempfile.TemporaryDirectory() as where:
        store = Path(where) / "s.sqlite"
        run_id = run_sweep(spec, store, progress=False).run_id
        (variant,) = load_report(run_id, store).variants
    (fam,) = variant["families"]
    cells = sum(1 for c in fam["cells"] if c["significant"])
    lo, hi = fam["mean_diff_ci"]
    return (f"  -{effect:.2f}  {reps:>3} {k:>3}  {fam['mean_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
            f"  {fam['pooled']['p_adjusted']:.2g}  {cells}/4")


def prompts(n: int) -> dict[tuple[int, float], list[list[dict[str, str]]]]:
    """The niah prompts of each cell, n repetitions, as the sweep builds them."""
    settings = BuildSettings("local", None, {"niah": {}}, 0, True)
    builder = CaseBuilder(settings)
    return {(length, depth): [builder.build(PlannedCase(Cell("niah", length, depth), rep)).messages
                              for rep in range(n)]
            for length in LENGTHS for depth in DEPTHS}


def power(cells: dict[tuple[int, float], list[list[dict[str, str]]]], n: int, k: int, effect: float,
          reps: int) -> tuple[float, float]:
    """(share of replications with a given cell significant, with the pooled test significant)."""
    tnoise = effect / TEMPERATURE
    cell_hits = pooled_hits = 0
    for r in range(reps):
        diffs_by_cell = []
        for messages in cells.values():
            diffs = []
            for prompt in messages[:n]:
                right = sum(not misses(prompt, TEMPERATURE, sample_nonce(r, s), tnoise) for s in range(k))
                diffs.append(right / k - 1.0)  # the reference is right: 1 - mean of the variant's samples
            diffs_by_cell.append(diffs)
        p_cells = [samples_test(d)[2] for d in diffs_by_cell]
        p_pooled = samples_test([x for d in diffs_by_cell for x in d])[2]
        adjusted = holm([*p_cells, p_pooled])
        cell_hits += adjusted[0] < ALPHA  # the first cell: every cell has the same truth
        pooled_hits += adjusted[-1] < ALPHA
    return cell_hits / reps, pooled_hits / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100, help="replications per power entry")
    args = ap.parse_args()
    start = time.perf_counter()
    print(f"decoding study: t0 vs t{TEMPERATURE:g} on sim:perfect?tnoise=effect/{TEMPERATURE:g}, "
          f"4 cells, Holm alpha={ALPHA:g}")
    print("\n1. anchor: one real sweep each (run_sweep, stored, report.variants)")
    print("  effect   n   k  mean diff [95% CI]         p(Holm) cells")
    for effect, k, n in ((0.05, 5, 10), (0.2, 1, 10), (0.2, 5, 10), (0.35, 5, 5)):
        print(anchor(effect, k, n))
    cells = prompts(max(NS))
    print(f"\n2. power per cell (pooled in brackets), {args.reps} replications each")
    header = "  effect   n " + "".join(f"{'k=' + str(k):>13}" for k in KS)
    print(header)
    for effect in EFFECTS:
        for n in NS:
            row = [power(cells, n, k, effect, args.reps) for k in KS]
            print(f"  -{effect:.2f}  {n:>3} " + "".join(f"  {c:4.2f} [{p:4.2f}]" for c, p in row))
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
