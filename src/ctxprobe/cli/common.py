"""Constants shared by the command modules."""

from __future__ import annotations

from ctxprobe.report.format import DEFAULT_REPORT_DIR
from ctxprobe.store.db import DEFAULT_STORE

__all__ = ["DEFAULT_REPORT_DIR", "DEFAULT_STORE", "EXAMPLES"]

EXAMPLES = """examples:
  ctxprobe run --model local --lengths 1k,2k,4k,8k,12k --depths 0,0.5,1 --reps 1 --distractors 3
  ctxprobe run spec.yaml --reps 5          # flags override the file
  ctxprobe runs
  ctxprobe report RUN_ID                   # table + PNG heatmap and curve
  ctxprobe report RUN_ID --json            # machine-readable, for CI
  ctxprobe export RUN_ID --jsonl -o cases.jsonl
  ctxprobe serve-sim --model sim:blind-middle --port 8000

exit codes: 0 ok · 1 check found a regression · 2 user error (one-line message) ·
  3 run incomplete: `error` cases left after retries, or prompts truncated by the server ·
  130 interrupted
"""
