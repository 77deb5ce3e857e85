"""The phone-book result in the terminal says what the HTML says: recall per book and N,
recall by position, and the answers the output limit cut off with a limit that fits."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import ctxprobe
from ctxprobe.families.phonebook.report_plots import phonebook_report
from ctxprobe.families.phonebook.report_terminal import AnswerStats, tally_answers, truncation_line
from ctxprobe.families.phonebook.task_grid import phonebook_spec
from stub_records import stub_records


def tally_answers_(recs: list[dict], max_tokens: int | None) -> dict:
    return tally_answers(stub_records(recs), max_tokens)


def _rec(outcome: str, finish: str = "stop", listed: int = 10, n: int = 10, tokens: int | None = 100,
         length: int = 100) -> dict:
    needles = [{"returned": "5550000" if i < listed else None} for i in range(n)]
    return {"family": "phonebook", "length": length, "meta": {"needles": n}, "outcome": outcome,
            "finish_reason": finish, "completion_tokens": tokens, "detail": {"needles": needles}}


def test_cut_off_answers_are_counted_and_a_fitting_limit_suggested() -> None:
    recs = [_rec("correct"), _rec("partial", "length", listed=4, tokens=100), _rec("output_truncated", "length",
                                                                                    listed=0, tokens=100)]
    st = tally_answers_(recs, 100)[(100, 10)]
    assert (st.answers, st.cut) == (3, 2)
    # 4 of 10 listed in 100 tokens: 250 needed, rounded up to a multiple of 32; none listed: twice the limit
    assert st.suggested == max(256, 224)


def test_an_answer_naming_every_name_then_running_on_is_not_cut_off() -> None:
    """The embedded 135M model lists all N names, then repeats itself to the limit."""
    from ctxprobe.families.phonebook.report_terminal import ran_on_line

    st = tally_answers_([_rec("output_truncated", "length", listed=10), _rec("output_truncated", "length", listed=9)],
                       352)
    assert (st[(100, 10)].cut, st[(100, 10)].ran_on) == (1, 1)
    line = ran_on_line(st)
    assert line is not None and line.startswith("1 of 2 answers named every asked name")


@pytest.mark.parametrize("outcome, finish, cut", [
    ("correct", "length", 0),  # every needle right: the limit cost nothing
    ("partial", "stop", 0),  # the model stopped by itself
    ("partial", "length", 1),
    ("wrong", "length", 1),
    ("output_truncated", "length", 1),
])
def test_what_counts_as_cut_off(outcome: str, finish: str, cut: int) -> None:
    assert tally_answers_([_rec(outcome, finish, listed=5)], 100)[(100, 10)].cut == cut


def test_suggestion_boundary_exact_multiple_is_kept() -> None:
    # 5 of 10 listed in 128 tokens: exactly 256 needed, which is already a multiple of 32
    assert tally_answers_([_rec("partial", "length", listed=5, tokens=128)], 128)[(100, 10)].suggested == 256
    assert tally_answers_([_rec("partial", "length", listed=5, tokens=129)], 129)[(100, 10)].suggested == 288


def test_truncation_line_names_the_limit_and_the_fix() -> None:
    assert truncation_line({(100, 10): AnswerStats(3, 0)}, 352) is None
    line = truncation_line({(100, 10): AnswerStats(3, 1, 384), (200, 10): AnswerStats(3, 3, 448)}, 352)
    assert line is not None and line.startswith("4 of 6 answers were cut off by --max-tokens 352")
    assert "--max-tokens 448" in line


def test_the_phonebook_command_prints_recall_and_cut_offs_in_80_columns(tmp_path) -> None:
    store = tmp_path / "pb.sqlite"
    # sim:perfect lists every name, ~25 tokens a line: 100 tokens hold 3 of 10 lines
    spec = phonebook_spec(model="sim:perfect", entries=[100, 200], needles=[10], runs=3, max_tokens=100)
    run = ctxprobe.run_sweep(spec, store, progress=False)
    buf = io.StringIO()
    phonebook_report([run.run_id], store, None, Console(file=buf, width=80, color_system=None))
    text = buf.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines())
    rows = [line.split() for line in text.splitlines() if line.strip().startswith(("100 ", "200 "))]
    assert len(rows) == 2
    for row in rows:
        # book, N, recall [lo, hi], five position groups, cut off
        assert row[1] == "10" and row[-1] == "3/3"
        assert row[5:10] == ["1.00", "0.50", "0.00", "0.00", "0.00"]  # the first lines got through
    assert "6 of 6 answers were cut off by --max-tokens 100" in " ".join(text.split())
    assert "At the largest book (200 entries, N=10) 30% of needles were recalled" in " ".join(text.split())


def test_default_limit_fits_a_full_answer(tmp_path) -> None:
    """With the default output limit nothing is cut off for the sims (25 tokens a line)."""
    store = tmp_path / "pb.sqlite"
    spec = phonebook_spec(model="sim:perfect", entries=[100], needles=[10], runs=2)
    run = ctxprobe.run_sweep(spec, store, progress=False)
    buf = io.StringIO()
    phonebook_report([run.run_id], store, None, Console(file=buf, width=80, color_system=None))
    assert "cut off by" not in buf.getvalue()
    assert any(line.split()[-1:] == ["0/2"] for line in buf.getvalue().splitlines())


def test_html_report_without_matplotlib_says_plots_were_not_drawn(tmp_path, monkeypatch) -> None:
    import ctxprobe.report.plots as plots
    from ctxprobe.report.html.page import build_html_report

    monkeypatch.setattr(plots, "can_plot", lambda: False)
    store = tmp_path / "s.sqlite"
    run = ctxprobe.run_sweep(ctxprobe.make_spec({"model": "sim:perfect", "lengths": "1k", "depths": [0.5],
                                                 "reps": 2}), store, progress=False)
    page = build_html_report([run.run_id], store, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "plot not drawn" in page and "data:image/png" not in page
