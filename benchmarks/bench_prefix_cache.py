"""Prompt tokens a prefix-caching server must compute for a 5-depth sweep: plan order vs random.

The same niah cases (one (length, rep) group per length, depths 1 → 0 in plan order) are
sent at concurrency 1 through ctxprobe's runner, once in plan order and once shuffled, to:

1. a sim server with llama.cpp-style prefix-cache accounting
   (:class:`ctxprobe.sim.prefix_cache.PrefixCacheSimServer`, exact token ids);
   also with ``share_prefix`` off (independent cases: no reuse possible);
2. llama.cpp's native server with the embedded SmolLM2 GGUF, the engine ``ctxprobe
   serve-local`` runs (the prebuilt ``xllamacpp`` wheel, in this process), with one slot and
   no host prompt cache (a one-prompt cache), then with serve-local's own settings (one
   slot, llama.cpp's default host prompt cache); a fresh server per order, so no order
   starts with the other's prompts cached. Computed tokens are the reported prompt tokens
   minus the ``cached_tokens`` figures it reports, as ctxprobe stored them; wall time per
   order is printed too (prefill dominates with ``max_tokens=1``).
3. with ``--llama-server PATH``, a ``llama-server`` binary of your own build, once with one
   slot and no host prompt cache, once with its defaults (4 slots, a host prompt cache),
   measured the same way.

Prints computed tokens per order and the ratios, side by side in one run, and the floor no
order can beat: with exact prefix caching everything after a case's needle is recomputed,
so a group of depths D costs at least ``1 + sum(1 - d for d in D except the deepest)`` full
prompts out of ``len(D)`` — 3.5 of 5 (0.70) for depths 0, 0.25, 0.5, 0.75, 1 — while a
random order of many groups recomputes nearly every token. See docs/prefix-sharing.md.

    python benchmarks/bench_prefix_cache.py [--lengths 512,1k,2k] [--reps 2] [--no-llama] [--llama-server PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from ctxprobe.models import resolve_provider
from ctxprobe.sim.prefix_cache import PrefixCacheSimServer
from ctxprobe.plan.grid import PlannedCase, planned_cases
from ctxprobe.sweep.standalone import run_cases
from ctxprobe.spec import Spec, make_spec
from ctxprobe.store import Store
from ctxprobe.tokenizers import resolve_tokenizer

def _spec(url: str, args: argparse.Namespace) -> Spec:
    return make_spec({"model": f"openai-compat:m@{url}", "tokenizer": "local", "lengths": args.lengths,
                      "depths": "0,0.25,0.5,0.75,1", "reps": args.reps, "concurrency": 1, "retries": 0,
                      "decoding": {"max_tokens": 1}})


def _orders(spec: Spec, seed: int) -> dict[str, list[PlannedCase]]:
    plan = list(planned_cases(spec))
    shuffled = list(plan)
    random.Random(seed).shuffle(shuffled)
    return {"plan order": plan, "random order": shuffled}


def bench_sim(args: argparse.Namespace, tmp: Path) -> None:
    tok = resolve_tokenizer("local")
    rows: list[tuple[str, int, int]] = []
    for share in (True, False):
        for name, order in _orders(_spec("http://x/v1", args), args.seed).items():
            if not share and name == "random order":
                continue  # independent cases share nothing in any order
            with PrefixCacheSimServer(resolve_provider("sim:perfect", tok), tok) as server:
                url = server.start()
                store = tmp / f"sim-{share}-{name[0]}.sqlite"
                run_id = run_cases(_spec(url, args), store, planned=order, share_prefix=share).run_id
                label = name + ("" if share else ", share_prefix off")
                recs = server.cache.records[-len(order):]  # the cases' requests, after the preflight probes
                rows.append((label, sum(r.prompt_tokens for r in recs), sum(r.computed_tokens for r in recs)))
                with Store(store) as db:  # what the run stored from the server's usage figures
                    stored = db.cache_totals(run_id)[0]
                served = sum(r.cached_tokens for r in recs)
                if stored != served:
                    print(f"  note: {label}: store holds {stored:,} cached tokens, server served {served:,}")
    _print("sim server (exact llama.cpp-style single-slot prefix cache)", rows)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _server(cmd: list[str], log: Path, what: str) -> Iterator[str]:
    """Start a server on loopback, wait until /v1/models answers, yield its base URL, stop it."""
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    base = f"http://127.0.0.1:{cmd[cmd.index('--port') + 1]}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start: {log.read_text(errors='replace')[-500:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def bench_llama(args: argparse.Namespace, tmp: Path) -> None:
    from ctxprobe.embedded import embedded_model_path
    from ctxprobe.embedded.xllama import Engine, EngineConfig

    n_ctx = max(4096, 2 * max(_spec("http://x/v1", args).lengths))
    threads = min(2, os.cpu_count() or 1)
    for label, cache_ram in (("one slot, no host prompt cache", 0), ("serve-local's settings: one slot", None)):
        rows: list[tuple[str, int, int]] = []
        walls: dict[str, float] = {}
        for name, order in _orders(_spec("http://x/v1", args), args.seed).items():
            engine = Engine(EngineConfig(path=embedded_model_path(), n_ctx=n_ctx, n_threads=threads,
                                         cache_ram_mib=cache_ram), purpose="bench_prefix_cache")
            try:
                store = tmp / f"llama-{cache_ram}-{name[0]}.sqlite"
                start = time.perf_counter()
                run_id = run_cases(_spec(engine.base_url + "/v1", args), store, planned=order).run_id
                walls[name] = time.perf_counter() - start
            finally:
                engine.close()
            with Store(store) as db:
                cached, reported, prompt = db.cache_totals(run_id)
            if reported < len(order):
                print(f"  note: {reported} of {len(order)} responses reported cached tokens")
            rows.append((name, prompt, prompt - cached))
        _print(f"llama.cpp via xllamacpp, embedded SmolLM2 ({label}; computed = prompt − reported cached tokens)",
               rows)
        print(f"  wall time: plan order {walls['plan order']:.1f} s, random order {walls['random order']:.1f} s, "
              f"ratio {walls['plan order'] / walls['random order']:.2f}")


def bench_native(args: argparse.Namespace, tmp: Path, binary: str) -> None:
    """The native ``llama-server``, one slot and no host prompt cache (``-np 1 --cache-ram 0``),
    then its defaults; computed = reported prompt tokens − the ``cached`` figures it reports
    (stored per response by ctxprobe)."""
    from ctxprobe.embedded import embedded_model_path

    n_ctx = max(4096, 2 * max(_spec("http://x/v1", args).lengths))
    for label, extra in (("one slot, no host cache", ["-np", "1", "--cache-ram", "0"]), ("defaults", [])):
        cmd = [binary, "-m", str(embedded_model_path()), "-c", str(n_ctx), "-t", str(min(2, os.cpu_count() or 1)),
               "--host", "127.0.0.1", "--port", str(_free_port()), *extra]
        rows: list[tuple[str, int, int]] = []
        for name, order in _orders(_spec("http://x/v1", args), args.seed).items():
            # a fresh server per order: its host prompt cache would otherwise still hold the
            # other order's prompts
            with _server(cmd, tmp / f"native-{len(extra)}-{name[0]}.err", "llama-server") as base:
                store = tmp / f"native-{len(extra)}-{name[0]}.sqlite"
                run_id = run_cases(_spec(base, args), store, planned=order).run_id
            with Store(store) as db:
                cached, reported, prompt = db.cache_totals(run_id)
            if reported < len(order):
                print(f"  note: {reported} of {len(order)} responses reported cached tokens")
            rows.append((name, prompt, prompt - cached))
        _print(f"llama-server ({label}; computed = prompt − reported cached tokens)", rows)


def floor_share(depths: list[float]) -> float:
    """Least share of prompt tokens any order computes for one (length, rep) group under an
    exact prefix cache: the deepest case in full, every other one from its needle on."""
    ds = sorted(depths, reverse=True)
    return (1 + sum(1 - d for d in ds[1:])) / len(ds)


def _print(title: str, rows: list[tuple[str, int, int]]) -> None:
    print(title)
    random_computed = next((c for n, _, c in rows if n == "random order"), None)
    for name, prompt, computed in rows:
        ratio = f"{computed / random_computed:.3f} of random" if random_computed else ""
        print(f"  {name:<32} prompt {prompt:>8,}  computed {computed:>8,}  ({computed / prompt:.3f} of prompt)  {ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="512,1k,2k")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-llama", action="store_true", help="skip the real llama.cpp server (serve-local)")
    ap.add_argument("--llama-server", metavar="PATH", help="also measure a llama-server binary of your own build")
    args = ap.parse_args()
    floor = floor_share([0, 0.25, 0.5, 0.75, 1])
    print(f"floor for any order (exact prefix cache, filler shared per length and rep): {floor:.3f} of the "
          f"prompt tokens; against a random order that computes ~all of them, ~{floor:.2f} of random at best")
    with tempfile.TemporaryDirectory() as d:
        bench_sim(args, Path(d))
        if not args.no_llama:
            bench_llama(args, Path(d))
        if args.llama_server:
            bench_native(args, Path(d), args.llama_server)


if __name__ == "__main__":
    main()
