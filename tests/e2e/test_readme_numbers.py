"""The README's demo numbers are written by scripts/readme_numbers.py from the demo's store.

The slow test runs `make demo`'s sweep (the embedded model, in process) in a fresh store
and checks that the README's block is exactly what the script renders from it, and that
every number in the block is one the demo printed. The fast tests check the rendering on
the same sweep sent to a simulated model, and the one statistical rule the block states.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("readme_numbers", ROOT / "scripts" / "readme_numbers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("readme_numbers", module)
    spec.loader.exec_module(module)
    return module


rn = _script()


def _families_and_lengths(args: list[str]) -> tuple[list[str], list[str]]:
    families = args[args.index("--family") + 1].split(",")
    lengths = [x.upper() for x in args[args.index("--lengths") + 1].split(",")]
    return families, lengths


def test_readme_block_has_a_row_per_demo_family_and_a_column_per_length() -> None:
    block = rn.readme_block((ROOT / "README.md").read_text(encoding="utf-8"))
    families, lengths = _families_and_lengths(rn.demo_args())
    header = block.splitlines()[0]
    assert header == "| family | " + " | ".join(lengths) + " | effective length |"
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    assert [re.match(r"\| `([^`]+)`", r).group(1) for r in rows] == families  # type: ignore[union-attr]


def test_replace_block_rewrites_only_between_the_markers() -> None:
    text = f"before\n{rn.START}\nold\n{rn.END}\nafter\n"
    new = rn.replace_block(text, "new line\n")
    assert new == f"before\n{rn.START}\nnew line\n{rn.END}\nafter\n"
    assert rn.readme_block(new) == "new line\n"
    with pytest.raises(SystemExit):
        rn.replace_block("no markers here\n", "x\n")


def test_with_store_replaces_the_demo_store() -> None:
    args = rn.with_store(["run", "--store", "demo.sqlite", "--reps", "8"], Path("/tmp/x.sqlite"))
    assert args == ["run", "--reps", "8", "--store", "/tmp/x.sqlite"]


def test_block_rendered_from_a_sim_run_of_the_demo_sweep_matches_its_json_report(tmp_path: Path) -> None:
    from ctxprobe.cli import main

    store = tmp_path / "sim.sqlite"
    args = rn.with_store(rn.demo_args(), store)
    # the demo's sweep, sent to a sim that fails past 1.5K tokens and misses a fifth of the rest
    args[args.index("local")] = "sim:decay?cliff=1500&width=600&noise=0.2"
    assert main([*args, "--no-plots", "--no-progress"]) == 0
    from ctxprobe.store import Store

    with Store(store) as db:
        (run,) = db.list_runs()
    block = rn.render_block(run.run_id, store)
    report = rn_json(run.run_id, store)
    families, lengths = _families_and_lengths(rn.demo_args())
    for family in families:
        row = next(line for line in block.splitlines() if line.startswith(f"| `{family}` |"))
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        iv = report["effective_length_intervals"][family]
        assert cells[-1] == iv["line"].removeprefix("effective length ")
        for cell, stat in zip(cells, _length_stats(report, family)):
            assert f"{stat['mean']:.2f} [{stat['lo']:.2f}–{stat['hi']:.2f}]" in cell
            assert cell.startswith(f"{round(stat['mean'] * stat['n'])}/{stat['n']}, ")
            for outcome, count in stat["outcomes"].items():
                assert (f"{count} `{outcome}`" in cell) == (outcome != "correct")
    assert (f"run {run.run_id} · model {run.model} · {run.n_final}/{run.n_planned} planned cases answered"
            in " ".join(block.split()))
    # below the table, the default report word for word: one profile table, the answers
    printed = _printed(run.run_id, store)
    said = _said(block)
    for line in said:
        assert line in printed, line
    assert [line for line in said if line.startswith("answer: ")] == [
        line for line in printed.split("\n") if line.startswith("answer: ")] and len(families) == 2


def rn_json(run_id: str, store: Path) -> dict:
    from ctxprobe.report.load import load_report

    return json.loads(json.dumps(load_report(run_id, store).to_dict()))


def _length_stats(report: dict, family: str) -> list[dict]:
    prof = next(p for p in report["profiles"] if p["family"] == family)
    return sorted(prof["lengths"], key=lambda s: s["length"])


@pytest.mark.slow
def test_readme_demo_block_is_what_the_demo_prints(tmp_path: Path) -> None:
    """Runs the demo's sweep on the embedded model in a fresh store (a few minutes on 2 cores)."""
    store = tmp_path / "demo.sqlite"
    run_id, printed = rn.run_demo(store, cwd=tmp_path)
    block = rn.render_block(run_id, store)
    readme = rn.readme_block((ROOT / "README.md").read_text(encoding="utf-8"))
    assert readme == block, "README.md's demo numbers are stale: run `python scripts/readme_numbers.py`"
    # every line below the table is one the demo printed (its default report), word for word
    said = _said(block)
    assert any(line.startswith("answer: ") for line in said)
    for line in said:
        assert line in " ".join(printed.split()), line
    # and the table's numbers are the run's own, as its JSON report gives them
    report = rn_json(run_id, store)
    for row in (line for line in block.splitlines() if line.startswith("| `")):
        family = re.match(r"\| `([^`]+)`", row).group(1)  # type: ignore[union-attr]
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        assert cells[-1] == report["effective_length_intervals"][family]["line"].removeprefix("effective length ")
        for cell, stat in zip(cells, _length_stats(report, family)):
            assert f"{stat['mean']:.2f} [{stat['lo']:.2f}–{stat['hi']:.2f}]" in cell


def _said(block: str) -> list[str]:
    """The block's lines below the table (its ```text block) as the demo prints them, spaces normalised."""
    text = block.split("```text\n", 1)[1].split("```", 1)[0]
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _printed(run_id: str, store: Path) -> str:
    import io

    from rich.console import Console

    from ctxprobe.report.load import load_report
    from ctxprobe.report.terminal import print_report

    buf = io.StringIO()
    print_report(load_report(run_id, store), Console(file=buf, width=80), plots=False)
    return "\n".join(" ".join(line.split()) for line in buf.getvalue().splitlines())
