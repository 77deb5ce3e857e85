"""Write the README's demo numbers from the demo's own store, so they cannot go stale.

    python scripts/readme_numbers.py            # run (or resume) `make demo`'s sweep, rewrite README.md
    python scripts/readme_numbers.py --check    # exit 1 when README.md's block differs from the store

The demo's sweep is read from the Makefile's ``demo`` recipe (the README shows the same
command; tests/unit/test_demo_matches_readme.py keeps them equal). It is run with
``python -m ctxprobe.cli`` on ``--store`` (default: the demo's own ``demo.sqlite``, so a
finished demo is resumed with nothing sent), and the block between
``<!-- demo-table:start -->`` and ``<!-- demo-table:end -->`` in README.md is rendered from
that store with the same report code the demo prints with: a table of each length's counts,
then the demo's default report as it prints it at 80 columns (its header, one profile table,
the notes that change a reading, the answer lines), less the line naming its PNGs.
tests/e2e/test_readme_numbers.py
(slow) runs the demo in a fresh store and checks the README's block equals this rendering
and that every number in it is in what the demo printed.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAKEFILE = ROOT / "Makefile"
START = "<!-- demo-table:start: written by scripts/readme_numbers.py from the demo's store; do not edit by hand -->"
END = "<!-- demo-table:end -->"
_BLOCK = re.compile(r"<!-- demo-table:start[^\n]*-->\n(.*?)<!-- demo-table:end -->", re.S)


def demo_args(makefile: Path = MAKEFILE) -> list[str]:
    """The ``ctxprobe run …`` arguments of the Makefile's ``demo`` recipe (without the program)."""
    recipe = re.search(r"^demo: .*\n((?:\t.*\n)+)", makefile.read_text(encoding="utf-8"), re.M)
    if recipe is None:
        raise SystemExit(f"no `demo:` recipe in {makefile}")
    words = shlex.split(recipe.group(1).replace("\t", "").replace("\\\n", " "))
    if not words or not words[0].endswith("/ctxprobe") or words[1] != "run":
        raise SystemExit(f"the demo recipe is not one `ctxprobe run` command: {words[:3]}")
    return words[1:]


def with_store(args: list[str], store: Path) -> list[str]:
    """The demo's arguments with ``--store`` pointing at ``store``."""
    out, skip = [], False
    for word in args:
        if skip:
            skip = False
            continue
        if word == "--store":
            skip = True
            continue
        if not word.startswith("--store="):
            out.append(word)
    return [*out, "--store", str(store)]


def demo_store() -> Path:
    """The store the demo writes (its ``--store``, relative to the repo root)."""
    args = demo_args()
    if "--store" not in args:
        return ROOT / "ctxprobe.sqlite"
    return ROOT / args[args.index("--store") + 1]


def run_demo(store: Path, *, plots: bool = False, cwd: Path = ROOT) -> tuple[str, str]:
    """Run (or resume) the demo's sweep on ``store``; return (run id, what it printed on stdout)."""
    argv = [sys.executable, "-m", "ctxprobe.cli", *with_store(demo_args(), store), "--no-progress"]
    if not plots:
        argv.append("--no-plots")
    env = {**os.environ, "COLUMNS": "80"}  # as the README's block shows it
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the demo exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    match = re.search(r"^run (\w+) (?:created|resumed)", proc.stderr, re.M)
    if match is None:
        raise SystemExit(f"no run id in the demo's output:\n{proc.stderr[-3000:]}")
    return match.group(1), proc.stdout


def _count(stat) -> str:  # noqa: ANN001 (a LengthStat)
    """``3/8, 0.38 [0.14–0.69]``: the successes only when every score is 0 or 1 (niah's are)."""
    from ctxprobe.report.format import fmt_interval, fmt_score

    text = f"{fmt_score(stat.mean)} {fmt_interval(stat.lo, stat.hi)}"
    if stat.mean is None:
        return "—"
    wins = stat.mean * stat.n
    return f"{round(wins)}/{stat.n}, {text}" if math.isclose(wins, round(wins), abs_tol=1e-9) else text


def _failures(stat) -> str:  # noqa: ANN001
    from ctxprobe.core.outcome import OUTCOMES

    seen = [o for o in OUTCOMES if o != "correct" and stat.outcomes.get(o)]
    seen += sorted(o for o in stat.outcomes if o not in OUTCOMES and o != "correct")
    return f" ({', '.join(f'{stat.outcomes[o]} `{o}`' for o in seen)})" if seen else ""


def render_block(run_id: str, store: Path) -> str:
    """The README's demo block for one stored run: a table of each length's counts (what
    ``report --details`` and ``--json`` hold), then what the demo prints, word for word: its
    default report at 80 columns (the same code prints both), less the line naming its PNGs.
    Nothing in it depends on the order requests reached the model (the prefix-cache share,
    which does, is a ``--details`` note)."""
    import io

    from rich.console import Console

    from ctxprobe.report.format import fmt_tokens
    from ctxprobe.report.load import load_report
    from ctxprobe.report.terminal import print_report

    report = load_report(run_id, store)
    lengths = sorted({s.length for p in report.profiles for s in p.lengths})
    lines = ["| family | " + " | ".join(fmt_tokens(L) for L in lengths) + " | effective length |",
             "|---" * (len(lengths) + 2) + "|"]
    for prof in report.profiles:
        by_length = {s.length: s for s in prof.lengths}
        cells = [(_count(by_length[L]) + _failures(by_length[L])) if L in by_length else "·" for L in lengths]
        line = report.intervals[prof.family].line().removeprefix("effective length ")
        lines.append(f"| `{prof.family}` | " + " | ".join(cells) + f" | {line} |")
    buf = io.StringIO()
    print_report(report, Console(file=buf, width=80, color_system=None, force_terminal=False), plots=False)
    lines += ["", "```text", *(line.rstrip() for line in buf.getvalue().rstrip("\n").splitlines()), "```"]
    return "\n".join(lines) + "\n"


def readme_block(text: str) -> str:
    match = _BLOCK.search(text)
    if match is None:
        raise SystemExit(f"README.md has no block between '<!-- demo-table:start' and '{END}'")
    return match.group(1)


def replace_block(text: str, block: str) -> str:
    readme_block(text)  # the markers must be there
    return _BLOCK.sub(lambda _: f"{START}\n{block}{END}", text, count=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=None,
                        help="store to run the demo on (default: the demo's own, demo.sqlite in the repo root)")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when README.md differs")
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    store = args.store or demo_store()
    run_id, _ = run_demo(store)
    block = render_block(run_id, store)
    text = args.readme.read_text(encoding="utf-8")
    if args.check:
        if readme_block(text) != block:
            sys.stdout.write(f"README.md's demo block differs from run {run_id} in {store}; expected:\n{block}")
            return 1
        print(f"README.md's demo block matches run {run_id} in {store}")
        return 0
    new = replace_block(text, block)
    args.readme.write_text(new, encoding="utf-8")
    print(("rewrote" if new != text else "unchanged:") + f" README.md's demo block from run {run_id} in {store}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
