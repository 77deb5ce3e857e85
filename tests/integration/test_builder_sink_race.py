"""The case builder (a worker thread) and the sink (the event loop) share no mutable list.

Found at scale: with ``--build-workers`` at 1M tokens, 2 of 5 runs crashed with ``IndexError``
at ``yield pending_cases[-1]`` — the building thread appended to a list and read its last
item while the event loop popped from it. The fix is structural: the sink stores each
item's own case, and the builder thread yields the case it built. These tests stress the
path (thread switches every microsecond, constant garbage collection running the gate's
finalizers, hundreds of cases on two build workers; and the finding's 1M-token scale).
Honest limit: on this machine the old code did not crash under them either (3 fast and
3 1M-token tries), so they guard the fixed path rather than replay the crash.
"""

from __future__ import annotations

import gc
import sys

import pytest

from ctxprobe.store import iter_export
from ctxprobe.sweep.standalone import run_cases
from ctxprobe.spec import make_spec


@pytest.fixture
def rapid_switching():
    # Thread switches every microsecond, and a garbage collection at nearly every
    # allocation: a collection runs the live-token gate's weakref finalizers (Python code)
    # in the middle of whatever allocated, which is where a switch can land between two
    # operations on a shared list.
    old, old_gc = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(1, 1, 1)
    yield
    sys.setswitchinterval(old)
    gc.set_threshold(*old_gc)


def test_parallel_build_with_a_busy_sink_stores_every_case(tmp_path, rapid_switching) -> None:
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "256,384",
                      "depths": "0,0.25,0.5,0.75,1", "reps": 16, "concurrency": 16})
    result = run_cases(spec, tmp_path / "race.sqlite", build_workers=2, live_tokens=2000)
    assert result.stored == 160
    records = list(iter_export(result.run_id, tmp_path / "race.sqlite"))
    assert len(records) == 160 and all(r["outcome"] == "correct" for r in records)
    # every stored case is the one its response answered (prompt and answer key side by side)
    assert all(r["expected"][0] in (r["output"] or "") for r in records)


@pytest.mark.slow
def test_parallel_build_at_1m_tokens_stores_every_case(tmp_path) -> None:
    """The finding's own scale: 1M-token cases built on two worker processes, one case each
    (the race needs two builders, not more cases: the fast test above runs hundreds)."""
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1m", "depths": "0,1",
                      "reps": 1, "concurrency": 4, "allow_beyond_window": True})
    result = run_cases(spec, tmp_path / "big.sqlite", build_workers=2)
    assert result.stored == 2
    records = list(iter_export(result.run_id, tmp_path / "big.sqlite"))
    assert len(records) == 2 and all(r["outcome"] == "correct" for r in records)
