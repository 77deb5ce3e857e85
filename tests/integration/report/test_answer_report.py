"""The default terminal report is the answer, said once, on one screen; ``--details`` is
today's whole report; the JSON does not change; intervals read as intervals."""

from __future__ import annotations

import json
import re

import pytest

from ctxprobe.analysis.efflength import EffectiveLength
from ctxprobe.cli import main

FAMILIES = ("niah", "vartrack", "aggregation", "multihop")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.err + got.out


@pytest.fixture
def four(tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[str, str, str]:
    """The issue's run: four families, every case correct, at 80 columns: (store, run id, all it printed)."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    store = str(tmp_path / "s.sqlite")
    code, text = _run(capsys, "run", "--model", "sim:perfect", "--lengths", "1k,2k", "--family", ",".join(FAMILIES),
                      "--store", store, "--no-plots")
    assert code == 0
    match = re.search(r"^run (\w+) created", text, re.M)
    assert match is not None
    return store, match.group(1), text


def test_four_family_run_fits_one_screen_with_every_answer(four: tuple[str, str, str]) -> None:
    _, _, text = four
    lines = text.splitlines()
    assert len(lines) <= 40, text  # everything run printed, stderr's lines included (127 before)
    assert max(len(line) for line in lines) <= 80
    for family in FAMILIES:
        # its table row: effective length, its 95% interval, accuracy at shortest and longest, verdict
        table = text[text.index("planned cases answered"):].splitlines()  # below the progress bar
        row = next(line for line in table if line.startswith(family + " "))
        assert row.split() == [family, "2K", "2K", "1.00", "(1K)", "1.00", "(2K)", "clears", "all", "lengths"], row
        assert f"answer: {family} reliable up to 2K (95% confidence)" in text
    # each fact once: no per-family grid, outcome table, second headline or Bayesian probability
    for repeated in ("accuracy by length × depth", "outcomes by length", "95% confident", "P(accuracy",
                     "every tested length clears", "shows no difference", "hold as long as"):
        assert repeated not in text, repeated
    assert text.count("reliable up to 2K") == len(FAMILIES)
    assert "--details" in text  # the way to the rest is named


def test_details_is_the_whole_report_and_json_is_unchanged(four: tuple[str, str, str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id, _ = four
    code, details = _run(capsys, "report", run_id, "--store", store, "--no-plots", "--details")
    assert code == 0
    for family in FAMILIES:
        for part in (f"{family}: accuracy by length × depth", f"{family}: outcomes by length",
                     f"{family}: effective length 2K (95% confident)", "note: position (" + family + ")"):
            assert part in details, part
    # the Bayesian probability says which kind of number it is, next to the 95% statement
    assert "Bayesian posterior P(accuracy ≥ 0.856)" in details and "not the 95% confidence above" in details
    code, raw = _run(capsys, "report", run_id, "--store", store, "--json")
    data = json.loads(raw[raw.index("{"):])
    assert code == 0 and data["effective_length_intervals"]["niah"]["p_clear"]  # still in the JSON
    assert any(n.startswith("position (niah)") for n in data["notes"])  # every note stays in the JSON


def test_reading_notes_stay_and_open_lengths_name_their_reps(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, text = _run(capsys, "run", "--model", "sim/blind-middle", "--lengths", "1k,2k", "--depths", "0,0.5,1",
                      "--reps", "2", "--store", str(tmp_path / "s.sqlite"), "--no-plots")
    assert code == 0
    assert "note: position (niah): the middle (50%) is weaker than the edges" in text  # significant: kept
    assert re.search(r"answer: niah not shown reliable at any tested length \(95% confidence\); `--reps\s+\d+`", text)
    assert "none shown, ≤ 2K" in text  # the interval cell, never "below 1K – 2K"


def _interval(point: int | None, lo: int | None, hi: int | None) -> EffectiveLength:
    return EffectiveLength("niah", 0.856, point, lo, hi, 0.95, (1024, 2048, 4096), {})


def test_an_interval_with_no_reliable_length_reads_as_one() -> None:
    # was "effective length at most 1K, possibly below 1K (95% confidence; observed 1K)"
    iv = _interval(1024, None, 1024)
    assert iv.line() == "effective length 1K observed; not shown reliable even at 1K (95% confidence)"
    assert iv.interval_text() == "none shown, ≤ 1K"
    wider = _interval(2048, None, 4096)
    assert wider.line() == ("effective length 2K observed; not shown reliable even at 1K; it may reach 4K "
                            "(95% confidence)")
    below = _interval(None, None, 2048)
    assert below.line() == ("effective length observed below 1K; not shown reliable even at 1K; it may reach 2K "
                            "(95% confidence)")
    assert _interval(2048, 1024, 4096).interval_text() == "1K – 4K"
