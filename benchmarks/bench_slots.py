"""Prefix reuse and harness overhead on a multi-slot llama.cpp server: case by case (the
order ctxprobe sent in before prefix-aware scheduling), prefix chains on slots (today's
scheduler), and RULER's ``call_api.py`` driver, side by side for each slot count.

For each slot count K a fresh native llama.cpp server (``ctxprobe serve-local``'s, from
xllamacpp, with the embedded SmolLM2) is started in process for each driver, so no run
finds another's prompts in a slot. The same niah sweep is then sent:

- ``case by case``: ``ctxprobe run`` with ``--slots 0 --concurrency K``: the cases in plan
  order, each to whichever of K workers is free; the server picks each one's slot;
- ``prefix chains``: ``ctxprobe run --concurrency K`` (slots read from ``/props``): the
  cases of one (length, repetition) go deepest first to one slot (``id_slot``), K chains at a time;
- ``RULER call_api``: the same cases' messages (from the first run's store, in plan order)
  sent the way RULER's ``scripts/pred/call_api.py`` sends its data file: batch size 1, a
  wave of K threads started in file order, all joined before the next wave starts; no
  ``id_slot`` (llama.cpp's default ``cache_prompt``).

Printed per run: prompt tokens, cached tokens (the server's ``cached_tokens`` per response),
computed tokens, and the two ratios:

- ``cached / tree``: cached tokens over the *prefix-tree maximum* — all prompt tokens less
  the nodes of the prefix tree of the cases' token ids
  (:func:`ctxprobe.sim.prefix_cache.prefix_tree_reuse`): the most any prefix cache
  could serve, whatever the order. 1.000 is the prefix-tree minimum of computed tokens.
  With K separate slot caches each slot's first case recomputes the head every case shares
  (chat template, system prompt, instruction: ~50 tokens here), so K slots reach
  ``1 - (K-1) * head / tree`` at best;
- ``c/reach``: cached tokens over that reachable reuse, ``tree - (K-1) * head`` (head: the
  tokens every prompt starts with); the target for prefix chains (>= 0.995; the few
  tokens cases of different chains share, e.g. the needle's wording, are out of reach);
- ``wall / busy``: the sending phase's wall time (the runner's, from its first case to its
  last response; the driver's for RULER) over the **server's busy time**: the length of the
  union, over all responses, of the intervals in which the server worked on them, each
  ``[received - (prompt_ms + predicted_ms), received]`` from the ``timings`` llama.cpp
  returns with every response. Overlapping requests on several slots count once, so this
  is the time at least one slot was computing; the rest of the wall time is the harness
  (building, storing, scoring, request gaps) with the server idle. ``slot s`` is the plain
  sum of ``prompt_ms + predicted_ms`` (slot-seconds).

The machine is shared and loaded: the load average is printed with every run.

    python benchmarks/bench_slots.py [--lengths 512,1k] [--reps 2] [--slots 1,2,4] [--tokenizer endpoint]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ctxprobe.sim.prefix_cache import prefix_tree_reuse
from ctxprobe.providers.llamacpp.serve import LocalServer, start_local_server
from ctxprobe.runner import Attempted, execute
from ctxprobe.spec import make_spec
from ctxprobe.store import iter_export
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer


@dataclass
class Trace:
    """Per response: when it arrived (monotonic s), the server's ms on it, prompt and cached tokens."""

    rows: list[tuple[float, float, int, int]] = field(default_factory=list)
    start: float = 0.0
    end: float = 0.0

    def add(self, extra: dict[str, Any], prompt: int | None) -> None:
        ms = extra.get("server_ms")
        cached = extra.get("cached_prompt_tokens")
        self.rows.append((time.monotonic(), float(ms) if isinstance(ms, float) else 0.0, prompt or 0,
                          cached if isinstance(cached, int) else 0))

    @property
    def wall(self) -> float:
        return self.end - self.start

    @property
    def busy(self) -> float:
        """Seconds in which at least one slot was working (union of the response intervals)."""
        spans = sorted((t - ms / 1000.0, t) for t, ms, _, _ in self.rows)
        total, cur_a, cur_b = 0.0, None, None
        for a, b in spans:
            if cur_b is None or a > cur_b:
                if cur_b is not None and cur_a is not None:
                    total += cur_b - cur_a
                cur_a, cur_b = a, b
            else:
                cur_b = max(cur_b, b)
        if cur_b is not None and cur_a is not None:
            total += cur_b - cur_a
        return total

    @property
    def compute(self) -> float:
        return sum(ms for _, ms, _, _ in self.rows) / 1000.0

    @property
    def prompt(self) -> int:
        return sum(p for _, _, p, _ in self.rows)

    @property
    def cached(self) -> int:
        return sum(c for _, _, _, c in self.rows)


def traced_executor(trace: Trace) -> Callable[..., Any]:
    """ctxprobe's own runner, with each response's timings noted as it reaches the sink."""

    async def run(cases: Any, target: Any, sink: Any, cfg: Any, **kw: Any) -> int:
        async def noting(item: Attempted) -> None:
            if item.result is not None:
                trace.add(item.result.extra, item.result.prompt_tokens)
            out = sink(item)
            if asyncio.iscoroutine(out):
                await out

        trace.start = time.monotonic()
        try:
            return await execute(cases, target, noting, cfg, **kw)
        finally:
            trace.end = time.monotonic()

    return run


def ruler_call_api(base_url: str, messages: list[list[dict[str, str]]], threads: int, max_tokens: int) -> Trace:
    """RULER's ``call_api.py`` loop: waves of ``threads`` requests in file order, each wave
    joined before the next starts (batch size 1)."""
    trace = Trace()
    lock = threading.Lock()
    client = httpx.Client(timeout=3600)

    def one(msgs: list[dict[str, str]]) -> None:
        body = {"model": "m", "messages": msgs, "max_tokens": max_tokens, "temperature": 0.0}
        data = client.post(f"{base_url}/chat/completions", json=body).json()
        t = data.get("timings", {})
        extra = {"server_ms": float(t.get("prompt_ms", 0.0) + t.get("predicted_ms", 0.0)),
                 "cached_prompt_tokens": int(t.get("cache_n", 0))}
        with lock:
            trace.add(extra, data.get("usage", {}).get("prompt_tokens"))

    trace.start = time.monotonic()
    for i in range(0, len(messages), threads):
        wave = [threading.Thread(target=one, args=(m,)) for m in messages[i:i + threads]]
        for w in wave:
            w.start()
        for w in wave:
            w.join()
    trace.end = time.monotonic()
    client.close()
    return trace


DRIVERS = {"cases": "case by case", "chains": "prefix chains", "ruler": "RULER call_api"}
#: cached tokens over the reachable reuse (the prefix tree less the cold slots' heads); a few
#: tokens that cases of *different* chains share (the needle's wording) stay out of reach
REUSE_TARGET = 0.995
#: wall time over the server's busy time
WALL_TARGET = 1.05


def _server(slots: int, ctx: int, threads: int) -> LocalServer:
    return start_local_server("local", port=0, slots=slots, ctx=ctx, n_threads=threads)


def common_head(ids: list[list[int]]) -> int:
    """Tokens every prompt starts with (chat template, system prompt, instruction)."""
    if not ids:
        return 0
    n = min(len(x) for x in ids)
    for i in range(n):
        if any(x[i] != ids[0][i] for x in ids):
            return i
    return n


def _row(label: str, trace: Trace, tree: int, reach: int, load: float) -> str:
    """One run's line, 80 columns (prompt tokens, the same for every driver, are in the footer)."""
    computed = trace.prompt - trace.cached
    return (f" {label:<14} {trace.cached:>6,} {computed:>7,} {trace.cached / tree:>6.3f} {trace.cached / reach:>7.3f}"
            f" {trace.wall:>6.1f} {trace.busy:>7.1f} {trace.compute:>7.1f} {trace.wall / trace.busy:>6.3f}"
            f" {load:>4.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", default="512,1k")
    ap.add_argument("--depths", default="0,0.25,0.5,0.75,1")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--slots", default="1,2,4")
    ap.add_argument("--tokenizer", default="endpoint", help="endpoint (the server's /tokenize) or local")
    ap.add_argument("--max-tokens", type=int, default=12)
    ap.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1), help="llama.cpp threads")
    ap.add_argument("--drivers", default="cases,chains,ruler",
                    help="in this order (ruler needs one of the others first): cases, chains, ruler")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-slots-"))
    local = resolve_tokenizer("local")  # the server's own ids (tests/e2e/test_native_server.py checks)
    print(f"niah {args.lengths} x depths {args.depths} x {args.reps} reps, max_tokens {args.max_tokens}, "
          f"\ntokenizer {args.tokenizer}, llama.cpp threads {args.threads}, {os.cpu_count()} cores")
    print(f" {'driver':<14} {'cached':>6} {'compute':>7} {'c/tree':>6} {'c/reach':>7} {'wall s':>6} {'busy s':>7}"
          f" {'slot s':>7} {'w/busy':>6} {'load':>4}")
    print("  (compute: prompt tokens computed; slot s: the plain sum of the server's times)")
    verdicts: list[tuple[int, float, float]] = []  # prefix chains: (slots, cached / reachable, wall / busy)
    for slots in [int(s) for s in args.slots.split(",")]:
        spec_args = {"tokenizer": args.tokenizer, "lengths": args.lengths, "depths": args.depths,
                     "reps": args.reps, "concurrency": slots, "retries": 2, "timeout": 3600, "decoding": {"max_tokens": args.max_tokens}}
        ctx = max(make_spec(spec_args).lengths) + args.max_tokens + 256
        print(f"{slots} slot(s):")
        tree = reach = prompt_tokens = head = chains = 0
        messages: list[list[dict[str, str]]] = []
        for driver in args.drivers.split(","):
            server = _server(slots, ctx, args.threads)
            try:
                if driver == "ruler":
                    trace = ruler_call_api(server.base_url, messages, slots, args.max_tokens)
                else:
                    extra = {"slots": 0} if driver == "cases" else {}
                    spec = make_spec({**spec_args, **extra, "model": server.model_spec})
                    trace = Trace()
                    store = tmp / f"{slots}-{driver}.sqlite"
                    result = run_sweep(spec, store, progress=False, executor=traced_executor(trace))
            finally:
                server.close()
            if not messages and driver != "ruler":
                records = sorted(iter_export(result.run_id, store), key=lambda r: (r["length"], r["rep"], -r["depth"]))
                messages = [r["messages"] for r in records]  # plan order
                ids = [local.encode_chat(m) for m in messages]
                tree = prefix_tree_reuse(ids)
                chains = len({(r["length"], r["rep"]) for r in records})
                head = common_head(ids)
                prompt_tokens = sum(len(x) for x in ids)
                reach = tree - (min(slots, chains) - 1) * head
            print(_row(DRIVERS[driver], trace, tree, reach, os.getloadavg()[0]), flush=True)
            if driver == "chains":
                verdicts.append((slots, trace.cached / reach, trace.wall / trace.busy))
        print(f"  prompt tokens {prompt_tokens:,}; prefix-tree maximum reuse {tree:,};"
              f"\n  reachable with {slots} slot cache(s) {reach:,}\n  (the tree less {min(slots, chains) - 1} x the"
              f" {head}-token head every prompt shares)")
    if verdicts:
        reuse_ok = all(r >= REUSE_TARGET for _, r, _ in verdicts)
        wall_ok = all(w <= WALL_TARGET for _, _, w in verdicts)
        print("prefix chains, cached / reachable: " + ", ".join(f"{k} slot(s) {r:.3f}" for k, r, _ in verdicts)
              + f"\n  target >= {REUSE_TARGET}: {'met' if reuse_ok else 'NOT met'}")
        print("prefix chains, wall / busy: " + ", ".join(f"{k} slot(s) {w:.3f}" for k, _, w in verdicts)
              + f"\n  target <= {WALL_TARGET}: {'met' if wall_ok else 'NOT met'}")


if __name__ == "__main__":
    main()
