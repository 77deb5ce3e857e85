"""Synthetic vs natural in the terminal: ``ctxprobe run`` and ``ctxprobe report`` print the
per-length comparison and the agreement verdict for a run holding both kinds of family,
and ``ctxprobe report NATURAL SYNTHETIC`` across two runs; at 80 columns. Sims with known
cliffs (``sim:decay``: every case passes below the cliff, none above)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from ctxprobe.analysis.grid import LengthStat, Profile
from ctxprobe.analysis.natural import agreement
from ctxprobe.cli import main
from ctxprobe.report.natural_terminal import render_agreements, verdict_line

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "natural"
DOCS = ["--param", f"documents.docs={EXAMPLE / 'docs'}", "--param", f"documents.qa={EXAMPLE / 'qa.jsonl'}",
        "--param", "documents.filler=documents"]


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


def _run(store: Path, model: str, families: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """Run a sweep through the CLI; (run id, what it printed on stdout)."""
    extra = DOCS if "documents" in families else []
    assert main(["run", "--details", "--model", model, "--tokenizer", "local", "--lengths", "1k,2k,4k", "--depths", "0.2,0.8",
                 "--reps", "5", "--family", families, *extra, "--store", str(store), "--no-plots",
                 "--no-progress"]) == 0
    captured = capsys.readouterr()
    run_id = captured.err.split("run ", 1)[1].split()[0]
    return run_id, captured.out


def _block(text: str) -> str:
    return text[text.index("synthetic vs natural"):]


def test_one_run_holding_both_prints_the_block_and_they_agree(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.sqlite"
    # cliff at 3000 tokens for both kinds of case: 1K and 2K pass, 4K fails
    run_id, printed = _run(store, "sim:decay?cliff=3000&width=0", "documents,niah", capsys)
    block = _block(printed)
    assert "synthetic vs natural: documents vs niah" in block
    rows = [line for line in block.splitlines() if line.startswith("│")]
    assert [r.split("│")[1].strip() for r in rows] == ["1K", "2K", "4K"]
    assert all(r.split("│")[-2].strip() == "same" for r in rows)
    assert "1.00 [0.72–1.00]" in rows[0] and "0.00 [0.00–0.28]" in rows[2]  # Wilson 95% at n=10
    verdict = " ".join(block.split())
    assert "documents vs niah: agree: no length differs" in verdict and "over 3 lengths" in verdict
    assert "effective length 2K vs 2K (natural vs synthetic)" in verdict
    assert all(len(line) <= 80 for line in printed.splitlines())
    # `report` prints the same block, once
    assert main(["report", "--details", run_id, "--store", str(store), "--no-plots"]) == 0
    again = capsys.readouterr().out
    assert again.count("synthetic vs natural:") == 1 and _block(again).split("note:")[0] == block.split("note:")[0]
    # a run without a natural family prints none
    _, plain = _run(store, "sim:decay?cliff=3000&width=0", "niah", capsys)
    assert "synthetic vs natural" not in plain


def test_a_natural_run_failing_earlier_disagrees_across_two_runs(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s.sqlite"
    # the natural reading fails from 1.5K on, the synthetic one from 3K
    natural, alone = _run(store, "sim:decay?cliff=1500&width=0", "documents", capsys)
    synthetic, _ = _run(store, "sim:decay?cliff=3000&width=0", "niah", capsys)
    assert "synthetic vs natural" not in alone  # one kind only
    assert main(["report", "--details", natural, synthetic, "--store", str(store), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("synthetic vs natural:") == 1
    block = _block(printed)
    assert f"documents ({natural}) vs niah ({synthetic})" in " ".join(block.split())
    rows = {r.split("│")[1].strip(): r for r in block.splitlines() if r.startswith("│")}
    assert rows["2K"].split("│")[-2].strip() == "differs"
    assert [k for k, r in rows.items() if "differs" in r] == ["2K"]
    verdict = " ".join(block.split())
    assert "documents vs niah: disagree: natural lower at 2K" in verdict
    assert "effective length 1K vs 2K (natural vs synthetic)" in verdict
    # the two sims differ in their cliff: a comparison across models, said so
    assert (f"note: {natural} is a run of sim:decay?cliff=1500&width=0, {synthetic} of "
            "sim:decay?cliff=3000&width=0: this compares two models") in verdict
    assert all(len(line) <= 80 for line in printed.splitlines())
    # a synthetic run of the same model as the natural one: no such note
    same, _ = _run(store, "sim:decay?cliff=1500&width=0", "niah", capsys)
    assert main(["report", "--details", natural, same, "--store", str(store), "--no-plots"]) == 0
    both = " ".join(capsys.readouterr().out.split())
    assert "documents vs niah: agree: no length differs" in both and "compares two models" not in both
    # in the other order the pair is the same, and found once
    assert main(["report", "--details", synthetic, natural, "--store", str(store), "--no-plots"]) == 0
    assert capsys.readouterr().out.count("natural lower at 2K") == 1


def _profile(family: str, stats: list[tuple[int, int, float]], eff: int | None) -> Profile:
    return Profile(family, 0.856, eff, [LengthStat(family, L, n, m, max(0.0, m - 0.1), min(1.0, m + 0.1))
                                        for L, n, m in stats], [])


def test_direction_untested_lengths_and_narrow_consoles() -> None:
    # natural above synthetic at 2K (20/20 vs 0/20: p = erfc(sqrt(40)/sqrt(2)), far below 0.05 / 2)
    nat = _profile("documents", [(1024, 20, 1.0), (2048, 20, 1.0), (4096, 0, 0.0)], 2048)
    syn = _profile("niah", [(1024, 20, 1.0), (2048, 20, 0.0), (4096, 20, 0.0)], 1024)
    a = agreement(nat, syn)
    line = verdict_line(a)
    assert "disagree: natural higher at 2K" in line and "over 2 lengths" in line
    assert "not tested at 4K (no scored case on a side)" in line and "effective length 2K vs 1K" in line
    # no effective length on a side reads as such, not as "None"
    assert "effective length below 1K vs 1K" in verdict_line(agreement(_profile("documents", [(1024, 20, 0.0)], None), syn))
    for width, has_n in ((80, True), (60, False)):
        buf = io.StringIO()
        render_agreements([(a, None, None, None)], Console(file=buf, width=width, color_system=None))
        text = buf.getvalue()
        header = next(line for line in text.splitlines() if "length" in line and "niah" in line)
        assert ("│  n │" in header or "┃  n ┃" in header) is has_n, text
        assert "1.00 [0.90–1.00]" in text and "0.00 [0.00–0.10]" in text  # the intervals always stay
        assert all(len(line) <= width for line in text.splitlines())


def test_an_effective_length_below_the_shortest_reads_the_same_in_the_terminal_and_both_pages(tmp_path: Path) -> None:
    """No length clears the bar on the natural side (shortest tested: 1K): "below 1K", as
    compare words it, in the terminal, the report's HTML section and decide's HTML table."""
    from types import SimpleNamespace

    from ctxprobe.decide.decision import Decision
    from ctxprobe.decide.html import decision_section
    from ctxprobe.report.html.natural import natural_section

    nat = _profile("documents", [(1024, 20, 0.0), (2048, 20, 0.0)], None)
    syn = _profile("niah", [(1024, 20, 1.0), (2048, 20, 0.0)], 1024)
    a = agreement(nat, syn)
    assert a.effective_lengths() == "below 1K vs 1K"
    assert "effective length below 1K vs 1K (natural vs synthetic)" in verdict_line(a)
    run = SimpleNamespace(run_id="r1", model="m", spec={"families": {"documents": {}, "niah": {}}})
    view = SimpleNamespace(report=SimpleNamespace(run=run), profiles=[nat, syn], label="r1")
    section = natural_section([view])
    assert section is not None and "effective length below 1K vs 1K" in section.text and "none" not in section.text
    facts = SimpleNamespace(model="m", run=run, families={}, natural=[a], price=None, cost=lambda: (None, ""))
    page = decision_section(Decision([facts], "tokens", [1024], [], [], []), tmp_path)  # type: ignore[list-item]
    (table,) = [t for t in page.tables if "natural check" in t.headers]
    assert table.rows[0][-1] == "below 1K vs 1K"
