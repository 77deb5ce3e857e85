"""``ctxprobe plan`` says how cases will be dispatched, by the rule the runner follows
(:func:`ctxprobe.plan.scheduling.chain_lanes`): prefix chains on server slots, or case by case."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.plan.scheduling import chain_lanes, dispatch, reports_slots
from ctxprobe.spec import make_spec

SERVED = "openai-compat:m@http://127.0.0.1:9/v1"  # nothing listens: plan asks no server


@pytest.mark.parametrize(("extra", "server", "expected"), [
    ({}, 2, 2),  # the server's slots
    ({}, 8, 4),  # at most the concurrency (4)
    ({}, None, None),  # nothing reported: case by case
    ({"slots": 3}, None, 3),  # --slots without a server figure
    ({"slots": 1}, 8, 1),  # --slots wins over the server
    ({"slots": 6, "concurrency": 5}, None, 5),
    ({"slots": 0}, 4, None),  # --slots 0: off
    ({"share_prefix": False}, 4, None),  # independent cases: nothing to keep on a slot
    ({"batch": True}, 4, None),  # provider batches: the provider orders them
])
def test_chain_lanes(extra: dict[str, object], server: int | None, expected: int | None) -> None:
    spec = make_spec({"model": SERVED, "lengths": "1k", **extra})
    assert chain_lanes(spec, server) == expected


def test_only_providers_that_ask_their_server_read_slots() -> None:
    assert reports_slots(SERVED)
    assert not any(reports_slots(m) for m in ("sim:perfect", "local", "openai:gpt-4o-mini", "anthropic:claude-x"))


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "--tokenizer", "local", *args]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("scheduling: ")]
    return line


def test_plan_states_the_dispatch_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line each, as a wide terminal shows them
    spec = tmp_path / "spec.yaml"
    spec.write_text("model: sim:perfect\nlengths: [512, 1024]\ndepths: [0, 0.5, 1]\nreps: 3\nconcurrency: 4\n")
    # a sim has no server slots: case by case, unless --slots says how many lanes
    assert _plan(capsys, str(spec)) == ("scheduling: case by case, up to 4 at once (sim reports no server "
                                        "slots; --slots N keeps each prefix chain on one)")
    assert _plan(capsys, str(spec), "--slots", "2") == (
        "scheduling: 6 prefix chains (family, length, repetition), each sent in order to one server slot, "
        "2 at a time (--slots 2, --concurrency 4)")
    assert _plan(capsys, str(spec), "--slots", "9").endswith("4 at a time (--slots 9, --concurrency 4)")
    assert _plan(capsys, str(spec), "--slots", "0") == "scheduling: case by case, up to 4 at once (--slots 0)"
    assert _plan(capsys, str(spec), "--slots", "2", "--no-share-prefix").startswith(
        "scheduling: case by case, up to 4 at once (--no-share-prefix")
    # a served model: the slots come from its server at run time
    served = _plan(capsys, "--model", SERVED, "--lengths", "1k,2k,4k", "--reps", "2", "--family", "niah,vartrack")
    assert served == ("scheduling: 12 prefix chains (family, length, repetition), each sent in order to one "
                      "server slot, min(slots, 4) at a time; slots read from the server's /props at run time "
                      "unless --slots (none reported: case by case)")


def test_reasoning_budgets_stay_inside_their_chain() -> None:
    spec = make_spec({"model": "sim:reasoner", "lengths": "1k,2k", "reps": 2, "reasoning_budgets": "0,1k",
                      "slots": 2})
    d = dispatch(spec)
    assert d.chains == 4 and d.lanes == 2  # 2 lengths x 2 reps; the budgets go with their prompt
