"""Ctrl-C on an in-process model: seconds from SIGINT to exit, against the time the
interrupted prompt would have kept the process busy.

Runs ``ctxprobe run --model local`` (the embedded SmolLM2) on one long niah case in a
child process, sends SIGINT while the prompt is being computed, and prints how long the
process took to exit, its exit code, and what was stored. Then (unless ``--no-baseline``)
it runs the same case to the end to measure how long the interrupted call would have
run: before llama.cpp's abort callback was wired, Ctrl-C waited for that call. (The
ratio compares the exit time with the uninterrupted run's time after the SIGINT point.)

    python benchmarks/bench_interrupt.py [--length 6k] [--after 5]
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _responses(store: Path) -> int:
    try:
        with sqlite3.connect(store) as db:
            return int(db.execute("SELECT count(*) FROM responses").fetchone()[0])
    except sqlite3.Error:
        return 0


def _started(store: Path) -> bool:
    try:
        with sqlite3.connect(store) as db:
            return db.execute("SELECT status FROM runs").fetchone() is not None
    except (sqlite3.Error, TypeError):
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", default="6k")
    ap.add_argument("--after", type=float, default=5.0, help="seconds after the run starts to send SIGINT")
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "s.sqlite"
        cmd = [sys.executable, "-m", "ctxprobe.cli", "run", "--model", "local", "--lengths", args.length,
               "--depths", "0.5", "--reps", "1", "--max-tokens", "40", "--store", str(store),
               "--no-progress", "--no-plots", "--out", str(Path(tmp) / "report")]
        # a child of a background shell inherits SIGINT ignored (and Python then keeps it so)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        while not _started(store) and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(args.after)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate()
        exit_s = time.monotonic() - sent
        last = (err.strip().splitlines() or [""])[-1]
        print(f"SIGINT {args.after:g} s into a {args.length} prompt: exit {proc.returncode} after {exit_s:.2f} s; "
              f"responses stored: {_responses(store)}; last line: {last!r}")
        if args.no_baseline:
            return
        fresh = Path(tmp) / "fresh.sqlite"
        cmd[cmd.index(str(store))] = str(fresh)
        start = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True)
        full = time.monotonic() - start
        print(f"the same sweep uninterrupted, fresh store: exit {done.returncode} after {full:.1f} s, "
              f"responses stored: {_responses(fresh)}")
        print(f"ratio: Ctrl-C exit took {exit_s / max(full - args.after, 1e-9):.3f} of the remaining computation")


if __name__ == "__main__":
    main()
