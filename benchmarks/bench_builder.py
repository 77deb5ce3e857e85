"""CPU time of ctxprobe's case builder vs a RULER-style binary-search builder, side by side.

Both build the same niah prompt (fully chat-templated, the same real BPE tokenizer) to the
same target length from the same filler sentences, at the same depth:

- ours: ``ctxprobe.haystack.packer.pack`` — filler counted from cached word counts (see
  :mod:`ctxprobe.haystack.counting`), one encode of the final prompt verifies the case;
- baseline: binary search over the number of filler sentences, re-encoding the whole
  templated prompt at every step (what RULER's ``prepare`` does), 14-16 encodes per case.

Three measurements per length (CPU time of this process, ``time.process_time``):

- cold: a new group — fresh prose (its generation is timed for ours, not for the
  baseline), an empty word-count cache, the first depth;
- warm: another depth of the same group (ours reuses the group's counted filler; the
  baseline has nothing to reuse);
- sweep: ``--groups`` groups × ``--depths`` depths built in one process, as a run does
  (the word cache kept across groups, the first group cold).

Then encodes per case for every family (``meta.encodes`` of real cases built through the
families at ``--family-lengths``), and how far below target cases land with built-in
prose and with a user haystack (``--haystack``, default this repo's ``docs/``).

    python benchmarks/bench_builder.py [--tokenizer local] [--lengths 32k,128k] [--cases 3]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from pathlib import Path

from ctxprobe.haystack import prose_sentences
from ctxprobe.haystack.counting import clear_word_counts
from ctxprobe.haystack.packer import FillerPool, Insert, pack
from ctxprobe.spec import parse_lengths
from ctxprobe.families.niah.task import NEEDLE, render
from ctxprobe.tokenizers import resolve_tokenizer

REPO = Path(__file__).resolve().parent.parent


def binary_search_build(tokenizer, sentences: list[str], needle: str, key: str, depth: float, target: int
                        ) -> tuple[int, int]:
    """Largest n such that the templated prompt with n filler sentences fits the target:
    (its token count, full-prompt encodes spent)."""
    encodes = 0

    def build(n: int) -> int:
        nonlocal encodes
        encodes += 1
        body = sentences[:n]
        at = round(depth * n)
        hay = " ".join(body[:at] + [needle] + body[at:])
        return len(tokenizer.encode_chat(render(hay, key)))

    lo, hi = 0, len(sentences)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if build(mid) <= target:
            lo = mid
        else:
            hi = mid - 1
    return build(lo), encodes


def _cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def compare(tok, target: int, cases: int, groups: int, depths: int) -> None:
    key, value = "brisk-lantern-482", "4819203"
    needle = NEEDLE.format(key=key, value=value)
    n_sent = int(target / 12)  # enough sentences for ~1.5x the target
    ours = {"cold": 0.0, "warm": 0.0, "sweep": 0.0}
    base = {"cold": 0.0, "warm": 0.0, "sweep": 0.0}
    enc = {"ours": [], "base": []}
    built: list[tuple[int, int]] = []
    for i in range(cases):
        seed = 1000 + i
        sentences = list(itertools.islice(prose_sentences(seed), n_sent))  # the baseline's copy
        clear_word_counts()
        d_cold, d_warm = (i + 0.5) / cases, 1 - (i + 0.5) / cases

        def ours_case(pool: FillerPool, depth: float):
            return pack(tok, lambda h: render(h, key), pool, [Insert(needle, depth, "target")], target)

        def cold():
            pool = FillerPool(prose_sentences(seed), tok)  # generation timed
            return pool, ours_case(pool, d_cold)

        t, (pool, packed) = _cpu(cold)
        ours["cold"] += t
        t2, warm = _cpu(lambda: ours_case(pool, d_warm))
        ours["warm"] += t2
        enc["ours"] += [packed.encodes, warm.encodes]
        for label, depth, mine in (("cold", d_cold, packed), ("warm", d_warm, warm)):
            t, (count, e) = _cpu(lambda: binary_search_build(tok, sentences, needle, key, depth, target))
            base[label] += t
            enc["base"].append(e)
            built.append((mine.token_count, count))
    # a sweep: groups x depths in one process, word cache kept across groups
    clear_word_counts()
    sweep_depths = [k / max(depths - 1, 1) for k in range(depths)][::-1]
    for g in range(groups):
        seed = 2000 + g

        def group():
            pool = FillerPool(prose_sentences(seed), tok)
            return [pack(tok, lambda h: render(h, key), pool, [Insert(needle, d, "target")], target).encodes
                    for d in sweep_depths]

        t, e = _cpu(group)
        ours["sweep"] += t
        enc["ours"] += e
        sentences = list(itertools.islice(prose_sentences(seed), n_sent))
        for d in sweep_depths:
            t, (_, be) = _cpu(lambda: binary_search_build(tok, sentences, needle, key, d, target))
            base["sweep"] += t
            enc["base"].append(be)
    n_sweep = groups * depths
    row = [f"{target:>8}"]
    for label, n in (("cold", cases), ("warm", cases), ("sweep", n_sweep)):
        row.append(f"{label} {ours[label] / n:6.3f}s vs {base[label] / n:6.2f}s = {base[label] / ours[label]:5.1f}x")
    print("  ".join(row))
    same = all(a == b for a, b in built)
    print(f"{'':>8}  full-prompt encodes/case: ours {statistics.mean(enc['ours']):.2f}, "
          f"baseline {statistics.mean(enc['base']):.1f}; same token counts as the baseline: {same} "
          f"(max shortfall ours {max(target - a for a, _ in built)}, baseline {max(target - b for _, b in built)})")


def families(tok_name: str, lengths: str, haystack: str | None) -> dict[str, list]:
    from ctxprobe.plan.grid import planned_cases
    from ctxprobe.cases.builder import build_cases
    from ctxprobe.spec import make_spec

    import json
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="bench_builder_"))
    (d / "docs").mkdir()
    (d / "docs" / "vault.md").write_text("# Vault notes\n\nThe north vault sits under the old archive.\n\n"
                                         "The access code for the north vault is Kelvor-Dane.\n")
    (d / "docs" / "garden.txt").write_text("The head gardener of the east greenhouse is Marisol Tenby.\n")
    (d / "qa.jsonl").write_text("\n".join(json.dumps(q) for q in (
        {"document": "vault.md", "question": "What is the access code for the north vault?", "answer": "Kelvor-Dane"},
        {"document": "garden.txt", "question": "Who is the head gardener of the east greenhouse?",
         "answer": "Marisol Tenby"})) + "\n")
    fams = {"niah": {}, "vartrack": {}, "multihop": {},
            "documents": {"docs": str(d / "docs"), "qa": str(d / "qa.jsonl")},
            "aggregation-cwe": {"variant": "common-words"}, "aggregation-fwe": {"variant": "frequent-words"},
            # --preset ruler: RULER's own prompts, sized by RULER-style search (interpolated)
            "ruler-niah": {"task": "niah_single_1"}, "ruler-vt": {"task": "vt"}, "ruler-cwe": {"task": "cwe"}}
    out: dict[str, list] = {}
    for label, params in fams.items():
        spec = make_spec({"model": "sim:perfect", "tokenizer": tok_name, "lengths": lengths, "reps": 2,
                          "depths": "0,0.25,0.5,0.75,1", "families": {label.split("-")[0]: params}, "haystack": haystack})
        out[label] = list(build_cases(spec, planned_cases(spec)))
    if haystack is None:
        spec = make_spec({"model": "sim:perfect", "tokenizer": tok_name, "lengths": lengths, "reps": 2,
                          "depths": "0", "families": {"phonebook": {}}})
        out["phonebook"] = list(build_cases(spec, planned_cases(spec)))
    return out


def report_families(tok_name: str, lengths: str, haystack: str | None) -> None:
    t0 = time.perf_counter()
    built = families(tok_name, lengths, haystack)
    print(f"haystack: {haystack or 'built-in prose'} ({time.perf_counter() - t0:.0f} s)")
    print(f"  {'family':<16} {'cases':>5} {'encodes/case':>12} {'max':>4}  {'shortfall max':>13}  "
          f"{'outside max(0.5%,16)':>20}")
    for label, cases in built.items():
        encodes = [c.meta.get("encodes") for c in cases]
        missing = sum(e is None for e in encodes)
        e = [x for x in encodes if x is not None]
        # a ruler case's length holds its output too (RULER's convention): its target is less
        short = [c.cell.length - ((c.max_tokens or 0) if c.cell.family == "ruler" else 0) - c.token_count
                 for c in cases]
        outside = sum(s > max(0.005 * c.cell.length, 16) for s, c in zip(short, cases))
        over = sum(s < 0 for s in short)
        print(f"  {label:<16} {len(cases):>5} {statistics.mean(e) if e else float('nan'):>12.2f} "
              f"{max(e) if e else 0:>4}  {max(short):>13}  {outside:>20}"
              + (f"  ({missing} without meta.encodes)" if missing else "") + (f"  OVER TARGET: {over}" if over else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokenizer", default="local")
    ap.add_argument("--lengths", default="32k,128k")
    ap.add_argument("--cases", type=int, default=3, help="cold (and warm) cases per length")
    ap.add_argument("--groups", type=int, default=2, help="groups in the sweep measurement")
    ap.add_argument("--depths", type=int, default=5, help="depths per group in the sweep")
    ap.add_argument("--family-lengths", default="4k,16k")
    ap.add_argument("--haystack", default=str(REPO / "docs"), help="a user haystack directory ('' to skip)")
    args = ap.parse_args()
    tok = resolve_tokenizer(args.tokenizer)
    print(f"tokenizer: {tok.name} ({type(tok).__name__}); CPU seconds per case, ours vs RULER-style binary search")
    for target in parse_lengths(args.lengths) if args.lengths else []:
        compare(tok, target, args.cases, args.groups, args.depths)
    report_families(args.tokenizer, args.family_lengths, None)
    if args.haystack:
        report_families(args.tokenizer, args.family_lengths, args.haystack)


if __name__ == "__main__":
    main()
