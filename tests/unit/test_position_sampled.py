"""The position-bias interval counts cases, not samples: a case sent k times reads one
prompt, so its k samples move together. Known truth: every depth has the same mix of easy
and hard cases (the true edge − middle deficit is 0); the interval must cover 0 about 95%
of the time. Counting each of k=8 samples as a case it covers 0 far less often (the
samples of a hard case all fail). An adaptive run gets no fixed-n interval at all."""

from __future__ import annotations

import random

from ctxprobe.analysis.position import position_bias
from ctxprobe.core.rows import ResultRow
from ctxprobe.report.position import position_report

DEPTHS = (0.0, 0.5, 1.0)


def _sampled_run(seed: int, reps: int = 6, k: int = 8) -> list[ResultRow]:
    rng = random.Random(seed)
    rows = []
    for rep in range(reps):
        for depth in DEPTHS:
            p = rng.choice((0.05, 0.95))  # the case's own difficulty: the same mix at every depth
            for s in range(k):
                hit = rng.random() < p
                rows.append(ResultRow("niah", 1024, depth, rep, "correct" if hit else "wrong", float(hit), 1000,
                                      sample=s))
    return rows


def _covers_zero(rows: list[ResultRow]) -> bool:
    (bias,) = position_bias(rows)
    (d,) = bias.lengths
    return d.lo <= 0.0 <= d.hi


def test_a_sampled_variant_s_interval_covers_a_true_zero() -> None:
    runs = 200
    covered = sum(_covers_zero(_sampled_run(seed)) for seed in range(runs))
    assert covered / runs >= 0.9, covered / runs


def test_each_case_counts_once() -> None:
    rows = _sampled_run(1)
    (bias,) = position_bias(rows)
    (d,) = bias.lengths
    assert (d.n_edge, d.n_middle) == (12, 6)  # 6 reps × 2 edge depths; 6 × 1 middle depth: cases, not 8× samples
    # the same cases sent once (each at its samples' mean) give the same interval
    means = {}
    for r in rows:
        means.setdefault((r.depth, r.rep), []).append(r.score or 0.0)
    once = [ResultRow("niah", 1024, dep, rep, "correct", sum(v) / len(v), 1000) for (dep, rep), v in means.items()]
    (again,) = position_bias(once)
    assert (again.lengths[0].lo, again.lengths[0].hi) == (d.lo, d.hi)


def test_an_adaptive_run_states_no_fixed_n_interval() -> None:
    rows = _sampled_run(2)
    found, lines = position_report(rows, adaptive=True)
    assert found == [] and len(lines) == 1
    assert "not stated for an adaptive run" in lines[0] and "[" not in lines[0]
    found, lines = position_report(rows)
    assert len(found) == 1 and "position (niah)" in lines[0]
