"""The two llama.cpp engines side by side on the embedded SmolLM2: xllamacpp (llama.cpp's
native server, prebuilt wheel — ctxprobe's engine) and llama-cpp-python (compiled from
source). Same GGUF, same thread count, one process, one engine loaded at a time.

Prints, per engine: prefill tokens/s at each prompt length (median of --reps, prompt
cache off), whether both tokenize a set of prompts to identical ids (plain text, and the
chat template rendered by each engine's own path), the greedy answer's common prefix on
the same token ids, and the abort latency (seconds from the abort flag to the call's
return, mid-prefill of a 4K prompt). Needs both packages in one environment:

    pip install 'xllamacpp==2026.10.11549' 'llama-cpp-python==0.3.36'   # the second compiles
    python benchmarks/bench_engine.py [--lengths 1024,4096] [--reps 3] [--threads 2]
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

PROMPTS = ["Hello, world!", "  leading spaces, 1234567 digits and 3.14159", "ünïcödé — “quotes” ‘here’ …",
           "<|im_end|> special text stays text", "tabs\tand\nnewlines\n\n end", "The 9:45 timetable lists 1,204 entries."]


def _filler_ids(tok: Any, n: int) -> list[int]:
    text = ("The harbour office counted forty-two lanterns before noon, and the survey team "
            "measured the garden's west wall again with great care. ")
    ids: list[int] = []
    while len(ids) < n:
        ids += tok.encode(text)
    return ids[:n]


def _chat(n_words: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "Remember: the code is 7741. " + "lorem ipsum " * n_words + "What is the code?"}]


class Flag:
    """An abort flag that records when it was set (the start of the abort latency)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.at = 0.0

    def set(self) -> None:
        self.at = time.perf_counter()
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()


class X:
    name = "xllamacpp"

    def __init__(self, threads: int, n_ctx: int) -> None:
        self.engine = Engine(EngineConfig(path=embedded_model_path(), n_ctx=n_ctx, n_threads=threads))
        self.tok = resolve_tokenizer(f"gguf:{embedded_model_path()}")  # its own /tokenize + /apply-template

    def encode(self, text: str) -> list[int]:
        return self.tok.encode(text)

    def encode_chat(self, messages: list[dict[str, str]]) -> list[int]:
        return self.tok.encode_chat(messages)

    def complete(self, ids: list[int], max_tokens: int, cache: bool = False) -> tuple[str, float]:
        t = time.perf_counter()
        out = self.engine.server.handle_completions({"prompt": ids, "max_tokens": max_tokens, "temperature": 0,
                                                     "top_k": 1, "cache_prompt": cache})
        return out["choices"][0]["text"], time.perf_counter() - t

    def abort_latency(self, ids: list[int], after: float) -> tuple[float, int]:
        flag = Flag()
        progress: dict[str, int] = {}

        def cb(chunk: Any) -> bool:
            if isinstance(chunk, dict) and isinstance(chunk.get("prompt_progress"), dict):
                progress.update(chunk["prompt_progress"])
            return flag.is_set()

        threading.Timer(after, flag.set).start()
        self.engine.server.handle_completions({"prompt": ids, "max_tokens": 8, "stream": True,
                                               "return_progress": True, "cache_prompt": False}, cb)
        done = time.perf_counter()
        while not flag.is_set():
            time.sleep(0.001)
        return done - flag.at, int(progress.get("processed", 0))

    def close(self) -> None:
        self.engine.close()


class L:
    name = "llama-cpp-python"

    def __init__(self, threads: int, n_ctx: int) -> None:
        import llama_cpp

        self.llama_cpp = llama_cpp
        self.llm = llama_cpp.Llama(model_path=str(embedded_model_path()), n_ctx=n_ctx, n_threads=threads,
                                   n_batch=512, flash_attn=True, verbose=False, seed=0)
        self.flag: Flag | None = None

        @llama_cpp.ggml_abort_callback
        def _abort(_data: Any) -> bool:
            return self.flag is not None and self.flag.is_set()

        self._cb = _abort
        llama_cpp.llama_set_abort_callback(self.llm._ctx.ctx, _abort, None)

    def encode(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode(), add_bos=False, special=False)

    def encode_chat(self, messages: list[dict[str, str]]) -> list[int]:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        meta = self.llm.metadata
        bos = self.llm._model.token_get_text(self.llm.token_bos())
        eos = self.llm._model.token_get_text(self.llm.token_eos())
        fmt = Jinja2ChatFormatter(template=meta["tokenizer.chat_template"], bos_token=bos, eos_token=eos)
        return self.llm.tokenize(fmt(messages=messages).prompt.encode(), add_bos=False, special=True)

    def complete(self, ids: list[int], max_tokens: int, cache: bool = False) -> tuple[str, float]:
        if not cache:
            self.llm.reset()
        t = time.perf_counter()
        out = self.llm.create_completion(prompt=ids, max_tokens=max_tokens, temperature=0, top_k=1, seed=0)
        return out["choices"][0]["text"], time.perf_counter() - t

    def abort_latency(self, ids: list[int], after: float) -> tuple[float, int]:
        self.llm.reset()
        self.flag = flag = Flag()
        threading.Timer(after, flag.set).start()
        try:
            self.llm.create_completion(prompt=ids, max_tokens=8)
        except RuntimeError:
            pass
        done = time.perf_counter()
        while not flag.is_set():
            time.sleep(0.001)
        self.flag = None
        return done - flag.at, int(self.llm.n_tokens)

    def close(self) -> None:
        self.llm.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="1024,4096")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--answer-tokens", type=int, default=24)
    ap.add_argument("--abort-after", type=float, default=2.0, help="seconds into a 4K prefill to abort")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    light = resolve_tokenizer("local")
    ids_by_len = {n: _filler_ids(light, n) for n in [*lengths, 4096]}
    chats = [_chat(w) for w in (0, 5, 50, 400)] + [[{"role": "user", "content": p}] for p in PROMPTS]
    results: dict[str, dict[str, Any]] = {}
    answers: dict[str, list[str]] = {}
    for cls in (X, L):
        eng = cls(args.threads, 8192)
        r: dict[str, Any] = {}
        r["plain_ids"] = [eng.encode(p) for p in PROMPTS]
        r["chat_ids"] = [eng.encode_chat(c) for c in chats]
        eng.complete(ids_by_len[lengths[0]][:64], 1)  # warm up
        for n in lengths:
            times = [eng.complete(ids_by_len[n], 1)[1] for _ in range(args.reps)]
            r[f"prefill_{n}"] = n / statistics.median(times)
            print(f"  {eng.name}: prefill {n} tokens: {r[f'prefill_{n}']:.1f} tok/s", flush=True)
        answers[eng.name] = [eng.complete(ids, args.answer_tokens)[0] for ids in r["chat_ids"][:4]]
        r["abort_s"], r["abort_processed"] = eng.abort_latency(ids_by_len[4096], args.abort_after)
        print(f"  {eng.name}: abort latency {r['abort_s']:.3f} s", flush=True)
        eng.close()
        results[eng.name] = r
    x, lp = results["xllamacpp"], results["llama-cpp-python"]
    light_plain = [light.encode(p) for p in PROMPTS]
    light_chat = [light.encode_chat(c) for c in chats]
    print(f"SmolLM2-135M-Instruct Q4_1, {args.threads} threads, median of {args.reps}, prompt cache off")
    print(f"{'':28}{'xllamacpp':>14}{'llama-cpp-python':>18}{'ratio':>8}")
    for n in lengths:
        a, b = x[f"prefill_{n}"], lp[f"prefill_{n}"]
        print(f"{'prefill tok/s @ ' + str(n):28}{a:14.1f}{b:18.1f}{a / b:8.2f}")
    print(f"{'abort latency s (4K)':28}{x['abort_s']:14.3f}{lp['abort_s']:18.3f}")
    print(f"{'  prompt tokens done by then':28}{x['abort_processed']:14d}{lp['abort_processed']:18d}")
    same_plain = x["plain_ids"] == lp["plain_ids"] == light_plain
    same_chat = x["chat_ids"] == lp["chat_ids"] == light_chat
    print(f"identical plain-text ids (xllamacpp = llama-cpp-python = ctxprobe local), {len(PROMPTS)} texts: {same_plain}")
    print(f"identical chat-template ids (each engine's own template path), {len(chats)} chats: {same_chat}")
    for i, (a, b) in enumerate(zip(answers["xllamacpp"], answers["llama-cpp-python"])):
        common = next((k for k, (p, q) in enumerate(zip(a, b)) if p != q), min(len(a), len(b)))
        print(f"greedy answer {i}: common prefix {common} of {max(len(a), len(b))} chars: {a[:60]!r}"
              + ("" if a == b else f" vs {b[:60]!r}"))


if __name__ == "__main__":
    main()
