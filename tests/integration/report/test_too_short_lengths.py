"""A family that cannot be built at a length runs at the lengths it can: plan and run say
so before sending, the report marks the others "too short", and the run of the families
that fit is not stopped (it was: "length 1024 is below the 2391 tokens this prompt needs")."""

from __future__ import annotations

import json
import re

import pytest

from ctxprobe.cli import main
from ctxprobe.spec import make_spec

MIXED = ("--model", "sim:perfect", "--family", "updates,longout,instructions", "--lengths", "1k,2k")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def test_plan_says_which_lengths_a_family_is_too_short_for(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = _run(capsys, "plan", *MIXED)
    assert code == 0
    assert re.search(r"too short for `longout` \(needs ≥ 2\.3K\): 1K, 2K not sent; it runs at no length of this "
                     r"sweep \(add one of at least 2,\d{3} tokens\)", out), out
    assert "20 cells, 100 requests" in out  # updates and instructions only: 2 × 2 lengths × 5 depths × 5 reps
    code, out, _ = _run(capsys, "plan", *MIXED, "--json")
    assert code == 0 and json.loads(out)["requests"] == 100 and json.loads(out)["too_short"]


def test_the_mixed_run_reports_all_three_families(tmp_path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = _run(capsys, "run", *MIXED, "--store", str(tmp_path / "s.sqlite"), "--no-plots")
    assert code == 0, err
    assert "too short for `longout` (needs ≥ 2.3K): 1K, 2K not sent" in err  # said before sending
    rows = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] in (["updates"], ["instructions"],
                                                                                         ["longout"])}
    assert set(rows) == {"updates", "instructions", "longout"}
    assert "too short" in rows["longout"] and "clears all lengths" in rows["updates"]
    assert "answer: updates reliable up to 2K" in out and "answer: instructions reliable up to 2K" in out
    assert "note: too short for `longout` (needs ≥ 2.3K): 1K, 2K not sent" in " ".join(out.split())


def test_a_family_runs_at_the_lengths_that_hold_it(tmp_path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    store = str(tmp_path / "s.sqlite")
    code, out, err = _run(capsys, "run", "--model", "sim:perfect", "--family", "updates,longout", "--lengths",
                          "1k,4k", "--store", store, "--no-plots", "--no-progress")
    assert code == 0, err
    assert "too short for `longout` (needs ≥ 2.3K): 1K not sent; it runs at 4K only" in err
    run_id = re.search(r"^run (\w+) created: 75 requests sent", err, re.M)
    assert run_id is not None  # 50 of updates, 25 of longout at 4K
    code, text, _ = _run(capsys, "report", run_id.group(1), "--store", store, "--json")
    data = json.loads(text)
    lengths = {p["family"]: [s["length"] for s in p["lengths"]] for p in data["profiles"]}
    assert lengths == {"updates": [1024, 4096], "longout": [4096]}
    assert any(n.startswith("too short for `longout`") for n in data["notes"])
    assert data["effective_length_intervals"]["longout"]["reliable_up_to"] == 4096


def test_too_short_is_no_part_of_the_run_identity() -> None:
    spec = make_spec({"model": "sim:perfect", "families": "updates,longout", "lengths": "1k,4k"})
    fitted = spec.model_copy(update={"too_short": {"longout": 2399}})
    assert fitted.run_id(tokenizer="local", version="0") == spec.run_id(tokenizer="local", version="0")
    assert "too_short" not in spec.model_dump() and fitted.model_dump()["too_short"] == {"longout": 2399}
    assert fitted.lengths_of("longout") == [4096] and fitted.lengths_of("updates") == [1024, 4096]


def test_when_no_family_fits_any_length_the_error_is_as_before(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "run", "--model", "sim:perfect", "--family", "longout", "--lengths", "1k",
                        "--store", str(tmp_path / "s.sqlite"), "--no-plots")
    assert code != 0 and "length 1024 is below the" in err and "tokens this prompt needs" in err
    assert len(err.strip().splitlines()) == 1
