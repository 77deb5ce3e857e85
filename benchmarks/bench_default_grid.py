"""Tokens to an answer: the default grid (reps derived from the bar) against the adaptive walk.

A run *answers* when its effective length is pinned: the report's 95% interval is one
length (``lo == hi``), so "reliable up to X" comes with "and not beyond" (or "below the
shortest length"). For each simulated model, both ways are run for real through the sims
(each reads its prompts; nothing here knows the answer key), lengths 1K/2K/4K, niah, and
this prints the prompt tokens each sent, whether it answered, and whether the answer is
the model's true effective length:

* ``default grid``: ``ctxprobe run`` with no ``--reps``: 5 depths × 5 reps = 25 cases a
  length, the smallest grid in which a model with no misses clears 0.856 at 95%;
* ``--reps 3``: the old default (15 cases a length), which cannot show the bar at all;
* ``--adaptive``: ``ctxprobe run --adaptive`` with its defaults (3 depths, the default
  token budget), stopping when every length is decided.

The models: ``sim:perfect`` (clear), ``sim:decay?cliff=2500&width=100`` (a cliff between 2K
and 4K), ``sim:decay?cliff=500&width=100`` (fails at once), ``sim:decay?noise=0.08`` (0.92
a case, above the bar but near it) and ``sim:blind-middle`` (the middle depths missed).

    python benchmarks/bench_default_grid.py            # seeds 0 and 1
    python benchmarks/bench_default_grid.py --seeds 1
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxprobe.report.load import load_report  # noqa: E402
from ctxprobe.spec import make_spec  # noqa: E402
from ctxprobe.sweep.adaptive import adaptive_sweep  # noqa: E402
from ctxprobe.sweep.run import run_sweep  # noqa: E402

LENGTHS = "1k,2k,4k"
#: model -> its true effective length at bar 0.856 (None: below 1K), from the sims' rules
MODELS: dict[str, int | None] = {
    "sim:perfect": 4096,
    "sim:decay?cliff=2500&width=100": 2048,
    "sim:decay?cliff=500&width=100": None,
    "sim:decay?noise=0.08&cliff=100000": 4096,
    "sim:blind-middle": None,
}


def _tokens(store: Path, run_id: str) -> int:
    with sqlite3.connect(store) as db:
        row = db.execute("SELECT COALESCE(SUM(token_count), 0) FROM cases WHERE run_id=?", (run_id,)).fetchone()
    return int(row[0])


def _verdict(store: Path, run_id: str) -> tuple[bool, int | None]:
    iv = load_report(run_id, store).intervals["niah"]
    return iv.lo == iv.hi, iv.lo


def measure(model: str, way: str, seed: int, store: Path) -> tuple[int, bool, int | None]:
    data: dict[str, object] = {"model": model, "lengths": LENGTHS, "seed": seed, "tokenizer": "approx"}
    if way == "--reps 3":
        data["reps"] = 3
    spec = make_spec(data)
    if way == "--adaptive":
        result = adaptive_sweep(spec, store)
        answered, lo = _verdict(store, result.run_id)
        return result.tokens_spent, answered, lo
    run_id = run_sweep(spec, store, progress=False).run_id
    answered, lo = _verdict(store, run_id)
    return _tokens(store, run_id), answered, lo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    ways = ["default grid", "--reps 3", "--adaptive"]
    print(f"niah, lengths {LENGTHS}, bar 0.856, 95%; {args.seeds} seed(s); tokens = prompt tokens sent (mean)")
    print("| model | true | " + " | ".join(f"{w}: tokens, answered, right" for w in ways) + " |")
    print("|---|---|" + "---|" * len(ways))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for m, (model, true) in enumerate(MODELS.items()):
            cells = []
            for w, way in enumerate(ways):  # a store each: the adaptive walk and the grid share a run id
                got = [measure(model, way, seed, Path(tmp) / f"{m}-{w}.sqlite") for seed in range(args.seeds)]
                tokens = sum(t for t, _, _ in got) / len(got)
                answered = sum(a for _, a, _ in got)
                right = sum(a and lo == true for _, a, lo in got)
                cells.append(f"{tokens:,.0f}, {answered}/{len(got)}, {right}/{len(got)}")
            print(f"| `{model}` | {true or 'below 1K'} | " + " | ".join(cells) + " |", flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
