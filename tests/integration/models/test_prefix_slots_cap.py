"""The spending cap reached in the middle of a prefix chain, two server slots: the run stops
in one line, every answered case is stored whole, and the resumed run sends exactly the
unanswered cases, each chain's remainder still deepest first on one slot."""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

from rich.console import Console

from ctxprobe.models import resolve_provider
from ctxprobe.sim.prefix_cache import CacheRecord, PrefixCacheSimServer
from ctxprobe.spec import make_spec
from ctxprobe.store import Store, iter_export
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

SLOTS = 2
# $1 per 1K prompt tokens: a 512-token case costs $0.511 and a 1K case $1.022-1.023, so a
# 512 chain (3 depths) costs $1.53 and a 1K chain $3.07. Whatever the lanes' interleaving,
# the cap stops the sweep with $4.73-5.75 spent and reserved, and no set of whole chains
# costs that ($4.60 or $6.13): at least one chain is cut in the middle.
CAP = 5.75


def _chain_sends(cases: list[CacheRecord], where: dict[tuple[int, ...], tuple[int, int, float]],
                 ) -> dict[tuple[int, int], list[tuple[int, float]]]:
    """(length, rep) -> [(slot, depth)] in the order the server received them."""
    out: dict[tuple[int, int], list[tuple[int, float]]] = defaultdict(list)
    for r in cases:
        length, rep, depth = where[r.ids]
        out[(length, rep)].append((r.slot, depth))
    return out


def test_cap_mid_chain_stops_in_one_line_keeps_every_answer_and_resumes_by_chain(tmp_path: Path) -> None:
    tok = resolve_tokenizer("local")
    store = tmp_path / "s.sqlite"
    with PrefixCacheSimServer(resolve_provider("sim:perfect", tok), tok, slots=SLOTS,
                              compute_s_per_token=2e-4) as server:
        url = server.start()
        model = f"openai-compat:m@{url}"
        prices = tmp_path / "prices.yaml"
        prices.write_text(f'"{model}": {{input: 1000.0, output: 0.0}}\n')
        base = {"model": model, "tokenizer": "local", "lengths": "512,1k", "depths": "0,0.5,1", "reps": 2,
                "decoding": {"max_tokens": 8}, "concurrency": 4, "prices": str(prices)}  # lanes: /props's 2 slots
        out = io.StringIO()
        first = run_sweep(make_spec({**base, "max_cost": CAP}), store, progress=False,
                          console=Console(file=out, width=80))
        served_first = list(server.cache.records)
        stored = list(iter_export(first.run_id, store))
        with Store(store) as db:
            spent = db.spent(first.run_id)
            built, done = db.case_ids(first.run_id), db.done_case_ids(first.run_id)
            status = db.get_run(first.run_id).status  # type: ignore[union-attr]

        lines = out.getvalue().splitlines()
        # what the grid can show is said first (run's own preamble), then the cap, once, last
        text = " ".join(lines)
        assert text.startswith("can show (95%): niah:") and text.count("stopped at the spending cap") == 1, lines
        assert lines[-1].startswith(f"stopped at the spending cap of ${CAP:.2f}"), lines
        assert 0 < spent <= CAP and status == "incomplete"
        # every case the server answered is stored, with its response: none lost, none half-written
        where = {tuple(tok.encode_chat(r["messages"])): (r["length"], r["rep"], r["depth"]) for r in stored}
        answered = [r for r in served_first if r.ids in where]
        # the rest are preflight's short probes: no case-sized request went unstored
        assert all(r.prompt_tokens < 256 for r in served_first if r.ids not in where)
        assert len(stored) == len(answered) == first.sent == len(built) == len(done)
        assert all(r["outcome"] == "correct" and r["cost_usd"] > 0 for r in stored)
        before = _chain_sends(answered, where)
        assert any(0 < len(sends) < 3 for sends in before.values()), before  # stopped in the middle of a chain
        for chain, sends in before.items():  # what was sent went deepest first, each chain on one slot
            assert len({s for s, _ in sends}) == 1 and [d for _, d in sends] == [1.0, 0.5, 0.0][:len(sends)], chain

        again = run_sweep(make_spec(base), store, progress=False, console=Console(file=io.StringIO()))
        served_again = list(server.cache.records)[len(served_first):]
        records = list(iter_export(again.run_id, store))

    assert again.run_id == first.run_id and again.resumed and again.already_done == len(stored)
    assert len(records) == 12 and again.sent == 12 - len(stored)
    where = {tuple(tok.encode_chat(r["messages"])): (r["length"], r["rep"], r["depth"]) for r in records}
    resent = [r for r in served_again if r.ids in where]
    assert len(resent) == again.sent  # only the unanswered cases, each once
    assert all(r.prompt_tokens < 256 for r in served_again if r.ids not in where)
    assert not {r.ids for r in resent} & {r.ids for r in answered}
    after = _chain_sends(resent, where)
    for chain, sends in after.items():
        sent_before = len(before.get(chain, []))
        assert len({s for s, _ in sends}) == 1, (chain, sends)  # the rest of a chain on one slot
        assert [d for _, d in sends] == [1.0, 0.5, 0.0][sent_before:], (chain, sends)  # deepest first
    with Store(store) as db:
        assert db.get_run(again.run_id).status == "complete"  # type: ignore[union-attr]
