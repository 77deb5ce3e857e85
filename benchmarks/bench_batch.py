"""The engine's prompt step (``n_batch`` = ``n_ubatch``) side by side: prefill speed against
abort latency, on the embedded SmolLM2 through xllamacpp (ctxprobe's engine).

llama.cpp computes a prompt ``n_batch`` tokens per server step and drops a cancelled
request between steps, so a larger step prefills faster (bigger matrix products) and aborts
later. For each step size this prints the prefill tokens/s at each length (median of
--reps, prompt cache off), the wall time of a demo-shaped workload (--demo-cases chat
prompts of about 800 tokens with 40 greedy output tokens, as `make demo` sends), the
abort latency mid-prefill of a 4K prompt, and each column's ratio to the first step size:

    python benchmarks/bench_batch.py [--batches 128,256,512] [--lengths 1024,4096] [--reps 3]

Run it with the machine to itself: another job on the cores changes every ratio.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

from ctxprobe.embedded import embedded_model_path
from ctxprobe.embedded.xllama import Engine, EngineConfig
from ctxprobe.tokenizers import resolve_tokenizer

FILLER = ("The harbour office counted forty-two lanterns before noon, and the survey team "
          "measured the garden's west wall again with great care. ")


def _ids(tok: Any, n: int, salt: int = 0) -> list[int]:
    ids: list[int] = tok.encode(f"Record {salt}. ")
    while len(ids) < n:
        ids += tok.encode(FILLER)
    return ids[:n]


def _one(engine: Engine, ids: list[int], max_tokens: int) -> float:
    t = time.perf_counter()
    engine.server.handle_completions({"prompt": ids, "max_tokens": max_tokens, "temperature": 0,
                                      "top_k": 1, "cache_prompt": False})
    return time.perf_counter() - t


def _abort(engine: Engine, ids: list[int], after: float) -> float:
    state = {"at": 0.0}
    flag = threading.Event()

    def fire() -> None:
        state["at"] = time.perf_counter()
        flag.set()

    threading.Timer(after, fire).start()
    engine.server.handle_completions({"prompt": ids, "max_tokens": 8, "stream": True,
                                      "return_progress": True, "cache_prompt": False},
                                     lambda chunk: flag.is_set())
    done = time.perf_counter()
    flag.wait()
    return max(0.0, done - state["at"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="128,256,512")
    ap.add_argument("--lengths", default="1024,4096")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--demo-cases", type=int, default=24)
    ap.add_argument("--abort-after", type=float, default=0.5, help="seconds into a 4K prefill to abort")
    args = ap.parse_args()
    batches = [int(x) for x in args.batches.split(",")]
    lengths = [int(x) for x in args.lengths.split(",")]
    tok = resolve_tokenizer("local")
    prompts = {n: _ids(tok, n) for n in [*lengths, 4096]}
    demo = [_ids(tok, 800, salt=i) for i in range(args.demo_cases)]
    rows: dict[int, dict[str, float]] = {}
    for b in batches:
        engine = Engine(EngineConfig(path=embedded_model_path(), n_ctx=8192, n_threads=args.threads, n_batch=b))
        _one(engine, prompts[lengths[0]][:64], 1)  # warm up
        r: dict[str, float] = {}
        for n in lengths:
            r[f"prefill {n} tok/s"] = n / statistics.median(_one(engine, prompts[n], 1) for _ in range(args.reps))
        t = time.perf_counter()
        for ids in demo:
            _one(engine, ids, 40)
        r[f"demo-shaped {args.demo_cases} cases s"] = time.perf_counter() - t
        r["abort latency 4K s"] = statistics.median(_abort(engine, prompts[4096], args.abort_after)
                                                    for _ in range(args.reps))
        engine.close()
        rows[b] = r
        print(f"  n_batch {b}: " + ", ".join(f"{k} {v:.3f}" for k, v in r.items()), flush=True)
    keys = list(rows[batches[0]])
    print(f"SmolLM2-135M-Instruct (embedded GGUF), {args.threads} threads, median of {args.reps}, cache off")
    print(f"{'n_batch':>8}" + "".join(f"{k:>26}" for k in keys))
    for b in batches:
        cells = "".join(f"{rows[b][k]:>16.3f} ({rows[b][k] / rows[batches[0]][k]:5.2f}x)" for k in keys)
        print(f"{b:>8}{cells}")


if __name__ == "__main__":
    main()
