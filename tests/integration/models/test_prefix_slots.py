"""Prefix-aware scheduling against a sim server with llama.cpp's slots: the cases that share
a prefix (one family, length and repetition) go in order, deepest first, to one slot, and
the server's cache then reuses every token their prefix tree allows. Today's case-by-case
dispatch on the same server loses part of it (cases of one chain meet on different slots)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctxprobe.models import resolve_provider
from ctxprobe.sim.prefix_cache import CacheRecord, PrefixCacheSimServer, common_prefix, prefix_tree_reuse
from ctxprobe.spec import make_spec
from ctxprobe.store import Store, iter_export
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

SLOTS = 2


def test_prefix_tree_reuse_counts_each_prompt_against_its_best_earlier_match() -> None:
    assert prefix_tree_reuse([]) == 0 and prefix_tree_reuse([[1, 2, 3]]) == 0
    # [1,2,3,4] and [1,2,3,9] share 3; [1,2,7] shares 2 with either; [5] nothing
    assert prefix_tree_reuse([[1, 2, 3, 4], [5], [1, 2, 7], [1, 2, 3, 9]]) == 5
    # a prompt wholly inside another still computes one token, as llama.cpp does
    assert prefix_tree_reuse([[1, 2, 3], [1, 2, 3]]) == 2
    # the best order: the shorter first, whole (2), then the longer from its third token
    assert prefix_tree_reuse([[1, 2], [1, 2, 3]]) == prefix_tree_reuse([[1, 2, 3], [1, 2]]) == 2


def _sweep(tmp_path: Path, name: str, **spec: Any) -> tuple[list[dict[str, Any]], list[CacheRecord], list[CacheRecord]]:
    """Run a small niah sweep through a 2-slot sim server; (stored records, the server's
    records of the cases, every request it served)."""
    tok = resolve_tokenizer("local")
    with PrefixCacheSimServer(resolve_provider("sim:perfect", tok), tok, slots=SLOTS,
                              compute_s_per_token=2e-4) as server:
        url = server.start()
        root = url.removesuffix("/v1")
        assert httpx.get(f"{root}/props").json()["total_slots"] == SLOTS
        assert [s["id"] for s in httpx.get(f"{root}/slots").json()] == list(range(SLOTS))
        store = tmp_path / f"{name}.sqlite"
        result = run_sweep(make_spec({"model": f"openai-compat:m@{url}", "tokenizer": "local", "lengths": "512,1k",
                                      "depths": "0,0.5,1", "reps": 2, "decoding": {"max_tokens": 8}, **spec}),
                           store, progress=False)
        records = list(iter_export(result.run_id, store))
        with Store(store) as db:
            stored_cached = db.cache_totals(result.run_id)[0]
        served = list(server.cache.records)
    wanted = {tuple(tok.encode_chat(r["messages"])) for r in records}
    cases = [r for r in served if r.ids in wanted]
    assert len(records) == len(cases) == 12
    assert stored_cached == sum(r.cached_tokens for r in cases)  # what the server said, stored per response
    return records, cases, served


def test_chains_stay_on_one_slot_in_order_and_reuse_the_whole_prefix_tree(tmp_path: Path) -> None:
    records, cases, _ = _sweep(tmp_path, "chains", concurrency=4)  # slots read from /props
    tok = resolve_tokenizer("local")
    chain_of = {tuple(tok.encode_chat(r["messages"])): (r["length"], r["rep"], r["depth"]) for r in records}
    per_chain: dict[tuple[int, int], list[tuple[int, float]]] = defaultdict(list)
    per_slot: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for r in cases:
        length, rep, depth = chain_of[r.ids]
        per_chain[(length, rep)].append((r.slot, depth))
        per_slot[r.slot].append((length, rep))
    assert len(per_chain) == 4
    for chain, sends in per_chain.items():
        assert len({slot for slot, _ in sends}) == 1, (chain, sends)  # one slot per chain
        assert [d for _, d in sends] == [1.0, 0.5, 0.0], (chain, sends)  # deepest first
    for slot, order in per_slot.items():  # a slot finishes one chain before starting another
        blocks = [k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]
        assert len(blocks) == len(set(blocks)), (slot, order)
    assert len(per_slot) == SLOTS  # both slots worked
    # within a chain nothing is lost: its cases reuse all their prefix tree holds
    chains: dict[tuple[int, int], list[CacheRecord]] = defaultdict(list)
    for r in cases:
        chains[chain_of[r.ids][:2]].append(r)
    for chain, sent in chains.items():
        assert sum(r.cached_tokens for r in sent[1:]) == prefix_tree_reuse([r.ids for r in sent]), chain
    # against one cache holding every case: only the head all cases share (template,
    # instruction) is recomputed by each slot's first case, plus a few tokens that cases of
    # different chains happen to share (the needle's wording), never more
    tree = prefix_tree_reuse([r.ids for r in cases])
    head = min(common_prefix(cases[0].ids, r.ids) for r in cases[1:])
    got = sum(r.cached_tokens for r in cases)
    assert tree - SLOTS * head - 8 * len(chains) <= got <= tree


def test_case_by_case_dispatch_loses_reuse_on_the_same_server(tmp_path: Path) -> None:
    _, chained, _ = _sweep(tmp_path, "chained", concurrency=SLOTS)
    _, by_case, _ = _sweep(tmp_path, "by-case", concurrency=SLOTS, slots=0)  # slots 0: case by case
    assert sum(r.cached_tokens for r in by_case) < sum(r.cached_tokens for r in chained)


@pytest.mark.parametrize("slots", [1, 3])
def test_slots_flag_wins_over_the_server_and_is_not_part_of_the_run_id(tmp_path: Path, slots: int) -> None:
    base = {"model": "openai-compat:m@http://127.0.0.1:9/v1", "lengths": "1k", "tokenizer": "local"}
    assert make_spec({**base, "slots": slots}).run_id(tokenizer="local", version="x") == \
        make_spec(base).run_id(tokenizer="local", version="x")
    _, cases, _ = _sweep(tmp_path, f"flag{slots}", concurrency=4, slots=slots)
    # --slots 1: one lane, every case on one slot; 3 lanes on a 2-slot server: pinned modulo its slots
    assert {r.slot for r in cases} == ({0} if slots == 1 else {0, 1})
