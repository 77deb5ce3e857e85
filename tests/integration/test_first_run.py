"""A first run answers: with no --reps, a perfect model's run ends "reliable up to"; a small
grid says before it runs that it cannot show the bar, and its report says how many reps
would settle each open length (the rule of analysis/resolving.py, checked there)."""

from __future__ import annotations

import json

import pytest

from ctxprobe.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_a_default_run_of_a_perfect_model_ends_reliable(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = _run(capsys, "run", "--model", "sim:perfect", "--lengths", "1k,2k", "--store",
                          str(tmp_path / "s.sqlite"), "--no-plots", "--no-progress")
    assert code == 0
    assert "niah: 25 cases a length; all correct shows accuracy ≥ 0.863; a length is shown to clear the bar 0.856 " \
           "with no miss" in err
    assert out.rstrip().splitlines()[-1] == "answer: niah reliable up to 2K (95% confidence)"


def test_a_two_rep_run_says_what_would_settle_each_open_length(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    store = str(tmp_path / "s.sqlite")
    code, out, err = _run(capsys, "run", "--model", "sim:perfect", "--lengths", "1k,2k", "--reps", "2",
                          "--store", store, "--no-plots", "--no-progress", "--details")
    assert code == 0
    # before: 10 cases a length cannot show the bar (the best they show is 0.025^(1/10) = 0.692)
    assert "niah: 10 cases a length; all correct shows accuracy ≥ 0.692: this grid cannot show the bar 0.856 " \
           "at any length; 24 cases a length would (`--reps 5`)" in err
    # plan --json says it too, line for line
    capsys.readouterr()
    assert main(["plan", "--model", "sim:perfect", "--lengths", "1k,2k", "--reps", "2", "--json"]) == 0
    assert [line for line in err.splitlines() if line.startswith("can show")] == json.loads(
        capsys.readouterr().out)["can_show"]
    # after: every open length, with the reps that settle it at the rate observed (all correct: 24 of 24)
    for length in ("1K", "2K"):
        assert (f"{length}: 10 of 10 correct cannot show an accuracy ≥ 0.856 with 95% confidence: at this rate "
                "that takes 24 of 24 (`--reps 5` here, 2.5× the cases)") in out
    assert out.rstrip().splitlines()[-1] == ("answer: niah not shown reliable at any tested length (95% confidence); "
                                             "`--reps 5` would settle 1K and 2K at the rates observed")
    run_id = next(line.split()[1] for line in err.splitlines() if line.startswith("run "))
    code, text, _ = _run(capsys, "report", run_id, "--store", store, "--json")
    settle = json.loads(text)["effective_length_intervals"]["niah"]["settle"]
    assert code == 0 and settle["1024"]["reps"] == settle["2048"]["reps"] == 5
    assert settle["1024"]["cases"] == 24 and settle["1024"]["settled_as"] == "reliable"
    # the HTML summary and decide carry the same sentence (escaped: model output never runs)
    html = tmp_path / "r.html"
    assert main(["report", run_id, "--store", store, "--html", str(html), "--no-plots"]) == 0
    assert ("1K: 10 of 10 correct cannot show an accuracy ≥ 0.856 with 95% confidence: at this rate that takes "
            "24 of 24 (`--reps 5` here, 2.5× the cases)") in html.read_text(encoding="utf-8")
    capsys.readouterr()
    code, text, _ = _run(capsys, "decide", run_id, "--store", store)
    assert code == 0 and "1K: 10 of 10 correct cannot show an accuracy ≥ 0.856 with 95%" in text
    # and a band left open names the reps too, not only "more cases would tell"
    assert ("maybe: A (not shown at 1,024 tokens: more cases would tell, `--reps 5` at the rate observed)"
            in " ".join(text.split()))  # wrapped at 80 columns, indented under its band
    # a sim is unpriced: said once per run, and a choice reads "(unpriced)", not "at unpriced"
    assert f"   run {run_id} · unpriced\n" in text and "cost unpriced" not in text and "at unpriced" not in text
    # so does the product limit it could not show: what would show its shortest length reliable
    limit = ("niah: no limit shown (limited by niah: not reliable at any tested length; `--reps 5` would settle 1K "
             "at the rate observed)")
    assert limit in " ".join(text.split())
    code, text, _ = _run(capsys, "decide", run_id, "--store", store, "--json")
    decision = json.loads(text)
    assert decision["runs"][0]["families"]["niah"]["settle"]["2048"]["cases"] == 24
    (lim,) = decision["limits"]
    assert lim["line"].endswith(limit) and [(x["family"], x["length"], x["cases"], x["reps"])
                                            for x in lim["settle"]] == [("niah", 1024, 24, 5)]
    page = tmp_path / "d.html"  # decide's page: its runs table carries it beside the verdict
    assert main(["decide", run_id, "--store", store, "--html", str(page)]) == 0
    assert ("2K: 10 of 10 correct cannot show an accuracy ≥ 0.856 with 95% confidence: at this rate that takes "
            "24 of 24 (`--reps 5` here, 2.5× the cases)") in page.read_text(encoding="utf-8")
    assert limit in page.read_text(encoding="utf-8")  # its product-limit table too
    # and the reps it names do settle it: the same command with --reps 5 answers
    code, out, _ = _run(capsys, "run", "--model", "sim:perfect", "--lengths", "1k,2k", "--reps", "5",
                        "--store", store, "--no-plots", "--no-progress")
    assert code == 0 and out.rstrip().splitlines()[-1] == "answer: niah reliable up to 2K (95% confidence)"


def test_a_decaying_model_is_told_apart_by_the_default_grid(tmp_path, capsys, monkeypatch) -> None:
    """sim:decay with its cliff at 1,500 tokens: 1K clears with 25 of 25, 2K fails outright."""
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = _run(capsys, "run", "--model", "sim:decay?cliff=1500&width=100", "--lengths", "1k,2k", "--store",
                        str(tmp_path / "s.sqlite"), "--no-plots", "--no-progress", "--details")
    assert code == 0
    assert out.rstrip().splitlines()[-1] == "answer: niah reliable up to 1K (95% confidence)"
    assert "effective length 1K (95% confident)" in out


def test_a_use_of_two_families_with_no_limit_says_what_would_show_one(tmp_path, capsys, monkeypatch) -> None:
    """decide --use niah,multihop on a 2-rep run of a perfect model: no limit, and each
    family's shortest length with the reps that settle it (24 of 24: --reps 5 of 5 depths)."""
    monkeypatch.setenv("COLUMNS", "200")
    store = str(tmp_path / "s.sqlite")
    code, _, err = _run(capsys, "run", "--model", "sim:perfect", "--lengths", "1k,2k", "--reps", "2", "--family",
                        "niah,multihop", "--store", store, "--no-plots", "--no-progress")
    run_id = next(line.split()[1] for line in err.splitlines() if line.startswith("run "))
    code, text, _ = _run(capsys, "decide", run_id, "--store", store, "--use", "niah,multihop", "--json")
    (lim,) = json.loads(text)["limits"]
    assert code == 0 and lim["lo"] is None
    assert lim["line"] == ("niah+multihop: no limit shown (limited by niah and multihop: not reliable at any tested "
                           "length; `--reps 5` would settle niah 1K and multihop 1K at the rates observed)")
    assert sorted((x["family"], x["length"], x["reps"]) for x in lim["settle"]) == [("multihop", 1024, 5),
                                                                                   ("niah", 1024, 5)]
