"""Cases/second of ctxprobe's builder vs a RULER-style binary-search builder.

Both build the same niah-style prompt (fully chat-templated, real BPE tokenizer) to the
same target length from the same filler sentences:

- ours: count each filler sentence once (as ``' ' + sentence``), sum the counts, then one
  encode of the final prompt to verify (``ctxprobe.haystack.packer.pack``);
- baseline: binary-search the number of filler sentences, re-encoding the whole templated
  prompt at every step (what RULER does).

Run side by side in one process; prints cases/second for each and the ratio.

    python benchmarks/bench_builder.py [--tokenizer local] [--lengths 32k,128k] [--cases 3]
"""

from __future__ import annotations

import argparse
import itertools
import time

from ctxprobe.haystack import prose_sentences
from ctxprobe.haystack.packer import FillerPool, Insert, assemble, pack
from ctxprobe.spec import parse_lengths
from ctxprobe.tasks.niah import NEEDLE, render
from ctxprobe.tokenizers import resolve_tokenizer


def binary_search_build(tokenizer, sentences: list[str], needle: str, key: str, depth: float, target: int) -> int:
    """Largest n such that the templated prompt with n filler sentences fits the target."""

    def build(n: int) -> int:
        body = sentences[:n]
        at = round(depth * n)
        hay = " ".join(body[:at] + [needle] + body[at:])
        return tokenizer.count_chat(render(hay, key))

    lo, hi = 0, len(sentences)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if build(mid) <= target:
            lo = mid
        else:
            hi = mid - 1
    return build(lo)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokenizer", default="local")
    ap.add_argument("--lengths", default="32k,128k")
    ap.add_argument("--cases", type=int, default=3)
    args = ap.parse_args()
    tok = resolve_tokenizer(args.tokenizer)
    key, value = "brisk-lantern-482", "4819203"
    needle = NEEDLE.format(key=key, value=value)
    print(f"tokenizer: {tok.name}")
    print(f"{'length':>8} {'ours cases/s':>14} {'binary-search cases/s':>22} {'ratio':>7}  (ours encodes/case)")
    for target in parse_lengths(args.lengths):
        # same filler for both builders: enough sentences for 1.5x the target
        sentences = list(itertools.islice(prose_sentences(7), int(target / 12)))
        ours_t, base_t, encodes, counts = 0.0, 0.0, 0, []
        for i in range(args.cases):
            depth = (i + 0.5) / args.cases
            t0 = time.perf_counter()
            pool = FillerPool(iter(sentences), tok)  # cold: every case counts its own filler
            packed = pack(tok, lambda h: render(h, key), pool, [Insert(needle, depth, "target")], target)
            ours_t += time.perf_counter() - t0
            encodes += packed.encodes
            t0 = time.perf_counter()
            base_count = binary_search_build(tok, sentences, needle, key, depth, target)
            base_t += time.perf_counter() - t0
            counts.append((packed.token_count, base_count))
        ours_rate, base_rate = args.cases / ours_t, args.cases / base_t
        print(f"{target:>8} {ours_rate:>14.3f} {base_rate:>22.3f} {ours_rate / base_rate:>6.1f}x  "
              f"({encodes / args.cases:.1f})  built tokens ours/baseline: {counts}")
    _ = assemble  # the shared assembly both builders' prompts follow


if __name__ == "__main__":
    main()
