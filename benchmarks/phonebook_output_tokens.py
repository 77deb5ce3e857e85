"""Output tokens a phone-book answer takes, per asked needle: what ``--max-tokens`` must fit.

Runs the phone-book grid with an output limit far above any real answer (so nothing is cut
off), then reads each stored answer's ``completion_tokens`` as the model's server counted
them and divides by the needles asked. Prints, per model, mean / 95th percentile / max
tokens per needle, the fixed part (preamble) estimated as the intercept of tokens over N,
and how many answers a given per-needle budget would have cut off. The default
(``ctxprobe.families.phonebook.task_grid.TOKENS_PER_NEEDLE`` and ``ANSWER_LEAD_IN``) is set from
this measurement; docs/phonebook.md records the numbers.

    python benchmarks/phonebook_output_tokens.py --model sim:perfect --model local
    python benchmarks/phonebook_output_tokens.py --model local --entries 100,200 --needles 10 --runs 3

The embedded model (``local``) runs in process on the CPU: a 200-entry book is ~5K tokens
of prompt, so keep the grid small.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxprobe import run_sweep  # noqa: E402
from ctxprobe.store import iter_export  # noqa: E402
from ctxprobe.families.phonebook.task_grid import ANSWER_LEAD_IN, TOKENS_PER_NEEDLE, phonebook_spec  # noqa: E402

#: An output limit no phone-book answer of these sizes reaches (checked: finish_reason).
GENEROUS = 48


_NUMBER_LINE = re.compile(r"\d{3}\D{0,3}\d{4}")


def tokens_to_nth_line(output: str, n: int, count) -> int | None:
    """Tokens up to the end of the answer's N-th line that holds a phone number: what a
    full answer costs even for a model that never stops by itself (it keeps listing)."""
    seen = 0
    end = 0
    for line in output.splitlines(keepends=True):
        end += len(line)
        if _NUMBER_LINE.search(line):
            seen += 1
            if seen == n:
                return count(output[:end].rstrip("\n"))
    return None


def measure(model: str, entries: list[str], needles: list[int], runs: int, store: Path) -> list[dict]:
    spec = phonebook_spec(model=model, entries=entries, needles=needles, runs=runs,
                          max_tokens=GENEROUS * max(needles) + 128)
    result = run_sweep(spec, store, progress=False)
    from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer

    tok = resolve_tokenizer(spec.tokenizer or infer_tokenizer(model), model=model)
    rows = []
    for rec in iter_export(result.run_id, store):
        if rec.get("completion_tokens") is None:
            continue
        n = rec["meta"]["needles"]
        rows.append({"n": n, "tokens": rec["completion_tokens"], "finish": rec.get("finish_reason"),
                     "per_needle": rec["completion_tokens"] / n, "outcome": rec.get("outcome"),
                     "to_n": tokens_to_nth_line(rec.get("output") or "", n, tok.count)})
    return rows


def intercept(rows: list[dict]) -> float | None:
    """Least-squares intercept of tokens over N (the preamble), when N varies."""
    ns = {r["n"] for r in rows}
    if len(ns) < 2:
        return None
    xs, ys = [r["n"] for r in rows], [r["tokens"] for r in rows]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="model spec (repeatable)")
    ap.add_argument("--entries", default="100,200", help="book sizes in entries (default 100,200)")
    ap.add_argument("--needles", default="10", help="needle counts (default 10)")
    ap.add_argument("--runs", type=int, default=3, help="books per configuration (default 3)")
    args = ap.parse_args()
    entries = [e.strip() for e in args.entries.split(",")]
    needles = [int(n) for n in args.needles.split(",")]
    print(f"grid: entries {entries}, N {needles}, {args.runs} runs; current default budget "
          f"{TOKENS_PER_NEEDLE} tokens per needle + {ANSWER_LEAD_IN}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.model:
            rows = measure(model, entries, needles, args.runs, Path(tmp) / "pb.sqlite")
            if not rows:
                print(f"{model}: no answers stored")
                continue
            per = sorted(r["per_needle"] for r in rows)
            p95 = per[min(len(per) - 1, round(0.95 * (len(per) - 1)))]
            cut = sum(r["finish"] == "length" for r in rows)
            pre = intercept(rows)
            fits = sum(r["tokens"] <= TOKENS_PER_NEEDLE * r["n"] + ANSWER_LEAD_IN for r in rows)
            print(f"{model}: {len(rows)} answers, tokens per needle mean {statistics.fmean(per):.1f}, "
                  f"p95 {p95:.1f}, max {per[-1]:.1f}; longest answer {max(r['tokens'] for r in rows)} tokens"
                  f"{'' if pre is None else f'; preamble ≈ {pre:.0f} tokens'}; {cut} hit the generous limit; "
                  f"{fits}/{len(rows)} fit the current default")
            full = [r for r in rows if r["to_n"] is not None]
            if full:
                need = max(r["to_n"] for r in full)
                print(f"  answers listing all N lines: {len(full)}/{len(rows)}; tokens to the N-th line: max {need}, "
                      f"per needle max {max(r['to_n'] / r['n'] for r in full):.1f} (preamble included); "
                      f"{sum(r['to_n'] <= TOKENS_PER_NEEDLE * r['n'] + ANSWER_LEAD_IN for r in full)}/{len(full)} "
                      "fit the current default")
    return 0


if __name__ == "__main__":
    sys.exit(main())
