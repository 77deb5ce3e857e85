"""A token-level model (not a measurement) of what other filler layouts would save.

Why ctxprobe shares filler per (length, repetition) and not more widely: for each layout,
the prompt tokens an exact single-slot prefix cache (llama.cpp's) computes in the best
order we know for that layout, and in random orders, as shares of all prompt tokens. A
prompt is modelled as instructions, filler up to the needle, the needle, the rest of the
filler and the question; two prompts share tokens up to the first difference.

Layouts (which cases draw the same filler stream):
  group   one per (length, rep) — ctxprobe's (independent repetitions, paired depths)
  reps    one per length, shared by all repetitions (as RULER's essay haystack)
  nested  one per rep, each length a prefix of the next (common filler across lengths)
  all     one per family: both of the above

A cache that keeps every prefix computes the prefix tree of all prompts in any order (the
last column): there only the layout matters.

Sharing more lowers our order's cost, but it also lets a random order hit the cache more
often, so the ratio the issue asks about (ours / random) barely moves — and only "reps"
reaches 0.60, at five repetitions, by making the repetitions of a cell read the same text
(their outcomes are then correlated and the per-cell intervals too narrow).

    python benchmarks/model_prefix_layouts.py
"""

from __future__ import annotations

import random

DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)
Case = tuple[int, float, int]  # (length, depth, rep)


def _prompt(case: Case, layout: str, instr: int = 30, needle: int = 15, question: int = 20) -> list[tuple]:
    length, depth, rep = case
    key = {"group": (length, rep), "reps": (length,), "nested": (rep,), "all": ()}[layout]
    body = length - instr - needle - question
    at = round(depth * body)
    filler = [("f", *key, i) for i in range(body)]
    return ([("i", i) for i in range(instr)] + filler[:at] + [("n", *case, i) for i in range(needle)]
            + filler[at:] + [("q", *case, i) for i in range(question)])


def _computed(prompts: list[list[tuple]]) -> int:
    prev: list[tuple] = []
    total = 0
    for p in prompts:
        shared = 0
        for a, b in zip(prev, p):
            if a != b:
                break
            shared += 1
        total += len(p) - min(shared, len(p) - 1)  # the last token is always evaluated
        prev = p
    return total


def _tree(prompts: list[list[tuple]]) -> int:
    """Tokens a cache that keeps every prefix computes (vLLM APC, SGLang radix): the nodes
    of the prompts' prefix tree — the same in every order."""
    root: dict = {}
    nodes = 0
    for p in prompts:
        node = root
        for tok in p:
            nxt = node.get(tok)
            if nxt is None:
                nxt = node[tok] = {}
                nodes += 1
            node = nxt
    return nodes


def _best_order(cases: list[Case], layout: str) -> list[Case]:
    if layout == "group":
        return sorted(cases, key=lambda c: (c[0], c[2], -c[1]))
    if layout == "reps":
        return sorted(cases, key=lambda c: (c[0], -c[1], c[2]))
    if layout == "nested":
        return sorted(cases, key=lambda c: (c[2], -c[0] * c[1], -c[0]))
    return sorted(cases, key=lambda c: (-c[0] * c[1], -c[0], c[2]))


def model(lengths: list[int], reps: int, layout: str, shuffles: int = 20) -> tuple[float, float, float]:
    cases = [(n, d, r) for n in lengths for r in range(reps) for d in DEPTHS]
    prompts = {c: _prompt(c, layout) for c in cases}
    full = sum(len(p) for p in prompts.values())
    ours = _computed([prompts[c] for c in _best_order(cases, layout)])
    rand = 0
    for s in range(shuffles):
        order = random.Random(s).sample(cases, len(cases))
        rand += _computed([prompts[c] for c in order])
    return ours / full, rand / shuffles / full, _tree(list(prompts.values())) / full


def main() -> None:
    print("share of prompt tokens computed, 5 depths 0..1: single-slot cache (ours, random order) and a cache "
          "keeping every prefix (any order)")
    print(f"{'lengths':<22} {'reps':>4} {'layout':<7} {'ours':>6} {'random':>7} {'ours/random':>12} "
          f"{'all-prefix':>11}")
    for lengths in ([512, 1024, 2048], [1024, 2048, 4096, 8192]):
        for reps in (1, 3, 5):
            for layout in ("group", "reps", "nested", "all"):
                ours, rand, tree = model(lengths, reps, layout)
                print(f"{','.join(map(str, lengths)):<22} {reps:>4} {layout:<7} {ours:>6.3f} {rand:>7.3f} "
                      f"{ours / rand:>12.3f} {tree:>11.3f}")


if __name__ == "__main__":
    main()
