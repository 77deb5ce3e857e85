"""One voice: the effective-length interval a run's data allow, by how they were collected.

A fixed grid gets the exact binomial bounds of :mod:`ctxprobe.analysis.efflength`; an
adaptively collected run (``run --adaptive``) gets the walk's always-valid tests
(:mod:`ctxprobe.analysis.adaptive_verdict`), never fixed-n intervals over cells whose size
the data chose. Every reader (``report``, ``decide``, the HTML page) asks here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxprobe.analysis.adaptive_verdict import adaptive_intervals, is_adaptive
from ctxprobe.analysis.bars import resolve_bars
from ctxprobe.analysis.efflength import EffectiveLength, effective_lengths
from ctxprobe.core.rows import ResultRow
from ctxprobe.core.runmeta import RunMeta
from ctxprobe.spec.threshold import Bar

__all__ = ["run_intervals"]


def run_intervals(rows: list[ResultRow], spec: Mapping[str, Any], meta: RunMeta | Mapping[str, Any], *,
                  threshold: float, bars: Mapping[str, Bar] | None = None,
                  units: Mapping[str, str] | None = None, families: Iterable[str] = (),
                  confidence: float = 0.95) -> tuple[dict[str, float], dict[str, EffectiveLength]]:
    """(each family's bar as a number, each family's interval) for one run's rows.

    ``bars`` (per family) override the run's own ``spec["bars"]``; ``threshold`` is the
    bar of every other family."""
    merged: dict[str, Bar] = {**(spec.get("bars") or {}), **(bars or {})}
    thresholds = resolve_bars(rows, threshold, merged, families)
    if is_adaptive(meta):
        return thresholds, adaptive_intervals(rows, meta, spec.get("lengths") or [], thresholds, units)
    found = effective_lengths(rows, threshold=threshold, confidence=confidence, units=dict(units or {}),
                              thresholds=thresholds)
    return thresholds, {iv.family: iv for iv in found}
