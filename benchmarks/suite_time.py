"""The test suite's own time: CI's command on fresh clones of two commits, side by side.

Clones the repository at ``--baseline`` (default ``52d8920``: the tiers and xdist, before
the model tests ran apart; any commit works) and at ``--head`` (default HEAD)
into a scratch folder, runs ``CI=true bash .ci/run`` in each, one after the other (never at
once: both use every core), and prints each one's wall time by phase as `.ci/run` logs it
(install, lint, pytest, the SDK lower bounds) and the ratio head / baseline.

Slow by design (each clone installs its own venv and runs every test: 30-45 minutes each on
2 cores), so it is a benchmark, not a test; docs/measurements.md has its last numbers. Run it
with the machine to itself: another job beside it inflates both sides unequally.

    python benchmarks/suite_time.py --baseline 52d8920 --head HEAD
    python benchmarks/suite_time.py --head HEAD --only-head     # one side (the numbers for the docs)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What `make test` prints at the end of each pytest run: "N passed ... in 123.45s (0:02:03)".
SUMMARY = re.compile(r"=+ (.*?) in ([\d.]+)s")


def clone(commit: str, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "-q", commit], check=True)
    return where


def run_ci(tree: Path, log: Path) -> tuple[float, int, list[tuple[str, float]]]:
    """Wall seconds of `CI=true bash .ci/run` in ``tree``, its exit code, and each pytest
    summary line with its own seconds (as pytest printed them)."""
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        code = subprocess.run(["bash", ".ci/run"], cwd=tree, env={**os.environ, "CI": "true"}, stdout=out,
                              stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - start
    runs = [(m.group(1), float(m.group(2))) for m in SUMMARY.finditer(log.read_text(encoding="utf-8"))]
    return wall, code, runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default="52d8920", help="the commit to compare with (default: before the tiers)")
    ap.add_argument("--head", default="HEAD")
    ap.add_argument("--only-head", action="store_true", help="time the head alone")
    ap.add_argument("--keep", help="a folder to keep the clones and logs in (default: a temporary one)")
    args = ap.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ctxprobe-suite-"))
    sides = [("head", args.head)] + ([] if args.only_head else [("baseline", args.baseline)])
    found: dict[str, float] = {}
    for name, commit in sides:
        tree = clone(commit, base / name)
        wall, code, runs = run_ci(tree, base / f"{name}.log")
        found[name] = wall
        print(f"{name} {commit}: .ci/run {wall / 60:.1f} min, exit {code} (log {base / f'{name}.log'})")
        for summary, seconds in runs:
            print(f"  pytest {seconds / 60:.1f} min: {summary}")
    if "baseline" in found:
        print(f"ratio head / baseline: {found['head'] / found['baseline']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
