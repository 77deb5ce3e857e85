"""Runner overhead: requests/second through ctxprobe's runner vs the raw ``openai`` async client.

Both send the same chat requests (a prebuilt niah case's messages) at the same
concurrency to the same minimal loopback server — a keep-alive asyncio HTTP server in its
own process that answers every chat completion with a fixed body, so the client side is
what is measured. Variants, interleaved over rounds (median reported):

- ``openai``: ``AsyncOpenAI(...).chat.completions.create`` under a semaphore;
- ``runner``: :func:`ctxprobe.runner.execute.execute` with the ``openai-compat:`` provider
  and a sink that only counts;
- ``runner+store``: the same with the sweep's sink (strict scoring + SQLite writes);
- ``+store NORMAL``: that with ``PRAGMA synchronous=NORMAL`` (WAL stays crash-safe for a
  killed process; only an OS crash can lose the last commits) — a proposal for the store.

    python benchmarks/bench_runner_overhead.py [--requests 1500] [--concurrency 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_BODY = json.dumps({
    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "I could not find it."},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 500, "completion_tokens": 6, "total_tokens": 506},
}).encode()


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length:
                await reader.readexactly(length)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def serve(port: int) -> None:
    async def main() -> None:
        server = await asyncio.start_server(_handle, "127.0.0.1", port, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _openai(url: str, messages: list, n: int, concurrency: int) -> float:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    sem = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with sem:
            await client.chat.completions.create(model="m", messages=messages, max_tokens=48, temperature=0.0)

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    elapsed = time.perf_counter() - start
    await client.close()
    return n / elapsed


async def _runner(url: str, cases: list, n: int, concurrency: int, store: Path | None,
                  synchronous: str | None = None) -> float:
    from ctxprobe.providers.openai_compat.api import OpenAICompatProvider
    from ctxprobe.runner.execute import RunnerConfig, execute

    provider = OpenAICompatProvider("m", url)
    cfg = RunnerConfig(concurrency=concurrency, max_tokens=48, retries=0)
    stream = (cases[i % len(cases)] for i in range(n))
    if store is None:
        done = [0]

        def sink(item) -> None:  # noqa: ANN001
            done[0] += 1
    else:
        from ctxprobe.sweep.standalone import make_sink
        from ctxprobe.store import Store
        from ctxprobe.haystack.context import BuildContext
        from ctxprobe.core.family_lookup import make_family, validate_params
        from ctxprobe.tokenizers import resolve_tokenizer

        db = Store(store)
        if synchronous:
            db.db.execute(f"PRAGMA synchronous={synchronous}")  # the proposed store setting
        db.ensure_run("bench", model="m", tokenizer="local", family="niah", version="0", spec={}, meta={})
        for case in cases:
            db.save_case("bench", case)  # rows the responses refer to (the sweep saves them as built)
        fam = make_family("niah", BuildContext(resolve_tokenizer("local"), None))
        sink = make_sink(db, "bench", {"niah": (fam, validate_params("niah", {}))})
    start = time.perf_counter()
    await execute(stream, provider, sink, cfg)
    elapsed = time.perf_counter() - start
    await provider.aclose()
    return n / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1500)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--length", default="512")
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve)
        return

    from ctxprobe.plan.grid import planned_cases
    from ctxprobe.cases.builder import build_cases
    from ctxprobe.spec import make_spec

    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": args.length,
                      "depths": "0,0.25,0.5,0.75,1", "reps": 1})
    cases = list(build_cases(spec, list(planned_cases(spec))))
    for c in cases:
        c.prompt_ids = None  # an HTTP provider never reads them
    port = _free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        rates: dict[str, list[float]] = {"openai": [], "runner": [], "runner+store": [], "+store NORMAL": []}
        with tempfile.TemporaryDirectory() as d:
            asyncio.run(_openai(url, cases[0].messages, 100, args.concurrency))  # warm up both paths
            asyncio.run(_runner(url, cases, 100, args.concurrency, None))
            for r in range(args.rounds):
                rates["openai"].append(asyncio.run(_openai(url, cases[0].messages, args.requests, args.concurrency)))
                rates["runner"].append(asyncio.run(_runner(url, cases, args.requests, args.concurrency, None)))
                rates["runner+store"].append(asyncio.run(
                    _runner(url, cases, args.requests, args.concurrency, Path(d) / f"s{r}.sqlite")))
                rates["+store NORMAL"].append(asyncio.run(
                    _runner(url, cases, args.requests, args.concurrency, Path(d) / f"n{r}.sqlite", "NORMAL")))
        med = {k: statistics.median(v) for k, v in rates.items()}
        print(f"{args.requests} requests x {args.rounds} rounds, concurrency {args.concurrency}, "
              f"prompt {cases[0].token_count} tokens, loopback fixed-reply server")
        for k, v in med.items():
            print(f"  {k:<13} {v:8.0f} req/s  (rounds: {', '.join(f'{x:.0f}' for x in rates[k])})"
                  f"  ratio to openai {v / med['openai']:.3f}")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
