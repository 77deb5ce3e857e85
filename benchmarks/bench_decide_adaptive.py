"""The adaptive decision's prompt tokens against the fixed grids of every model.

Three sims of known behaviour and price (sim/model.py: sim:decay answers right with
probability 1 up to `cliff` prompt tokens and 0 past cliff + width; sim:perfect always),
bands 2K, 4K, 8K, 3 depths:

* the fixed grids: each model at every band's length, 10 repetitions (30 cases a length),
  then ``ctxprobe decide`` on the three runs;
* the adaptive decision: ``decide --run ... --adaptive`` (ctxprobe.sweep.decide_adaptive),
  which sends cases band by band in price order, only while they can change a choice.

Printed: the prompt tokens of each, their ratio (target <= 0.5) and whether the two made
the same choices. Real sims through the real sweep into temporary SQLite stores; the
numbers are deterministic (the sims have no noise).

    python benchmarks/bench_decide_adaptive.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ctxprobe.decide import decide
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.decide_adaptive import adaptive_decision
from ctxprobe.sweep.run import run_sweep

PRICES = {"sim:perfect": 10.0, "sim:decay?cliff=3000&width=1": 1.0, "sim:decay?cliff=6000&width=1": 2.0}
BANDS = [2048, 4096, 8192]
GRID = {"lengths": BANDS, "depths": [0.0, 0.5, 1.0], "reps": 10, "tokenizer": "local"}


def _choices(decision) -> list[tuple[int, str | None, str]]:
    return [(c.band, c.choice.model if c.choice else None, c.meets) for c in decision.choices]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        prices = root / "prices.yaml"
        prices.write_text("".join(f'"{m}": {{input: {p}, output: {p}}}\n' for m, p in PRICES.items()),
                          encoding="utf-8")
        fixed_store = root / "fixed.sqlite"
        ids = [run_sweep(make_spec({"model": m, **GRID}), fixed_store, progress=False).run_id for m in PRICES]
        with Store(fixed_store) as s:
            fixed_tokens = sum(r.token_count for run_id in ids for r in s.result_rows(run_id))
        fixed = decide(ids, fixed_store, bands=BANDS, prices=prices)
        adaptive = adaptive_decision(list(PRICES), BANDS, root / "adaptive.sqlite",
                                     spec={"depths": [0.0, 0.5, 1.0], "tokenizer": "local"}, prices=prices)
    ratio = adaptive.total_tokens / fixed_tokens
    print("bands 2K, 4K, 8K; 3 depths; fixed grids at 10 repetitions a length")
    print(f"{'':<34}{'prompt tokens':>16}")
    print(f"{'fixed grids of the three models':<34}{fixed_tokens:>16,}")
    print(f"{'adaptive decision':<34}{adaptive.total_tokens:>16,}")
    for model, tokens in adaptive.tokens.items():
        print(f"  {model:<32}{tokens:>16,}")
    print(f"ratio adaptive / fixed: {ratio:.3f} (target <= 0.5): {'met' if ratio <= 0.5 else 'NOT met'}")
    same = _choices(fixed) == _choices(adaptive.decision)
    for band, model, meets in _choices(adaptive.decision):
        print(f"  band up to {band:>5,}: {model} ({meets})")
    print(f"same choices as the fixed grids: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
