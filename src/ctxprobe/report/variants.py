"""Prompt variants in words and JSON: each variant against its family's reference, paired
on the same seeded cases (the statistic: :mod:`ctxprobe.analysis.variants`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ctxprobe.analysis.compare import Comparison
from ctxprobe.analysis.variants import compare_variants
from ctxprobe.store import CaseRecord, open_existing


def variant_report(records: Iterable[CaseRecord], order: Iterable[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """(JSON per comparison, one line per comparison) for a run's case records."""
    found = compare_variants(records, order=order)
    return [variant_to_dict(c) for c in found], [variant_line(c) for c in found]


def variant_line(c: Comparison) -> str:
    """"variant niah~end vs niah~start: BETTER: ... (...; paired by content: ...)"."""
    return f"variant {c.run_b} vs {c.run_a}: {c.verdict()}"


def variant_to_dict(c: Comparison) -> dict[str, Any]:
    return {
        "reference": c.run_a, "variant": c.run_b, "verdict": c.verdict(), "alpha": c.alpha,
        "paired": c.n_paired, "excluded": c.n_excluded, "paired_by": "content identity (same seeded cases)",
        "samples": {"reference": c.samples[0], "variant": c.samples[1]},
        "tests": ("sign-flip of per-case means over the samples, per cell, Holm; paired bootstrap of cases"
                  if c.samples != (1, 1) else
                  "McNemar exact per cell (sign-flip per needle for the phone book), Holm; paired bootstrap"),
        "families": [{
            "family": f.family, "mean_diff": f.mean_diff, "mean_diff_ci": list(f.mean_diff_ci),
            "effective_reference": f.effective_a, "effective_variant": f.effective_b,
            "effective_diff_ci": list(f.effective_diff_ci), "pooled": asdict(f.pooled),
            "cells": [asdict(cell) for cell in f.cells], "lengths": [asdict(t) for t in f.lengths],
        } for f in c.families],
    }


def stored_variant_lines(run_id: str, store_path: str | Path) -> list[str]:
    """The lines of a stored run (empty without variants)."""
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        records = (r.without_prompt() for r in store.iter_case_records(run.run_id))  # pairing reads no prompt
        return variant_report(records, list(run.spec.get("families") or {}))[1]
