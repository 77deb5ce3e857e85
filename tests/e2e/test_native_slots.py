"""Prefix-aware scheduling on llama.cpp's native server (``serve-local``, xllamacpp, the
embedded SmolLM2) with two slots: the sweep reads the slots from ``/props``, sends each
(length, repetition) chain deepest first to one slot, and the server's own cache figures
then show every token the prefix tree allows reused."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctxprobe.sim.prefix_cache import common_prefix, prefix_tree_reuse
from ctxprobe.providers.llamacpp.serve import start_local_server
from ctxprobe.spec import make_spec
from ctxprobe.store import iter_export
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

pytestmark = pytest.mark.slow
SLOTS = 2


def test_two_slots_reuse_the_prefix_tree(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    server = start_local_server("local", port=0, slots=SLOTS, ctx=1024, n_threads=min(2, os.cpu_count() or 1))
    try:
        assert httpx.get(f"{server.engine.base_url}/props").json()["total_slots"] == SLOTS
        spec = make_spec({"model": server.model_spec, "tokenizer": "endpoint", "lengths": "256,512",
                          "depths": "0,0.5,1", "reps": 1, "concurrency": 4, "retries": 2,
                          "decoding": {"max_tokens": 8}})
        store = tmp_path / "s.sqlite"
        result = run_sweep(spec, store, progress=False)
    finally:
        server.close()
    records = list(iter_export(result.run_id, store))
    assert len(records) == 6 and all(r["outcome"] != "error" for r in records)
    assert all(isinstance(r["cached_prompt_tokens"], int) for r in records)
    tok = resolve_tokenizer("local")  # the server's ids (test_native_server checks they agree)
    chains: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(records, key=lambda r: -r["depth"]):  # each chain in its sending order
        chains[(r["length"], r["rep"])].append(r)
    for chain, sent in chains.items():
        ids = [tok.encode_chat(r["messages"]) for r in sent]
        # after a chain's first case, the server served each from its slot all the prefix tree allows
        assert sum(r["cached_prompt_tokens"] for r in sent[1:]) == prefix_tree_reuse(ids), chain
    every = [tok.encode_chat(r["messages"]) for r in records]
    tree = prefix_tree_reuse(every)
    head = min(common_prefix(every[0], x) for x in every[1:])
    cached = sum(r["cached_prompt_tokens"] for r in records)
    # one cache for all: only each slot's first case recomputes the shared head (plus a few
    # tokens that cases of different chains happen to share)
    assert tree - SLOTS * head - 8 * len(chains) <= cached <= tree
